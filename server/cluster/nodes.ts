/** The simulated nodes of the local super cluster: realistic capacity, spread over three zones. */
import type { KubeObject } from "@/server/k8s/apply";
import { indexedNames } from "./indexed-name";
import { SIMULATED_TAINT_KEY } from "./real-node/plan";

/** Label on every node Ring0 created in the local super cluster (scaleNodes only touches these). */
export const LOCAL_NODE_LABEL = "ring0.dev/local-node";
export const LOCAL_NODE_PREFIX = "ring0-node-";
export const ZONES = ["zone-a", "zone-b", "zone-c"] as const;
export const INSTANCE_TYPE = "ring0.standard-16";

/** Every simulated node's taint while the cluster has real nodes: tenant pods land on real nodes unless the operator lets a tenant tolerate it. */
export const SIMULATED_TAINT = { key: SIMULATED_TAINT_KEY, value: "true", effect: "NoSchedule" } as const;

/** A simulated node's addresses: the kubelet API (ring0-simkubelet) on localhost first. */
export function localNodeAddresses(index: number): { type: string; address: string }[] {
  return [
    { type: "InternalDNS", address: "localhost" },
    { type: "Hostname", address: "localhost" },
    { type: "InternalIP", address: `192.0.2.${(index % 254) + 1}` },
  ];
}

const localNames = indexedNames(LOCAL_NODE_PREFIX);
export const localNodeName = localNames.name;

/** Index of a node named by localNodeName, or undefined. */
export const localNodeIndex = localNames.index;

/**
 * A kwok-managed Node. kwok's node stage fills in conditions; the kubelet endpoint is
 * ring0-simkubelet's port (kwok serves none). The InternalDNS address comes first (the API server
 * prefers it) so the API server reaches that kubelet API on localhost and never dials the
 * documentation-range InternalIP; with real nodes, it carries the simulated taint.
 */
export function localNodeManifest(
  index: number,
  kubeletVersion = "v1.36.4",
  kubeletPort?: number,
  simulatedTaint = false,
): KubeObject {
  const zone = ZONES[index % ZONES.length] ?? "zone-a";
  const resources = { cpu: "16", memory: "64Gi", pods: "110", "ephemeral-storage": "200Gi" };
  const name = localNodeName(index);
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: {
        [LOCAL_NODE_LABEL]: "true",
        type: "kwok",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "kubernetes.io/hostname": name,
        "topology.kubernetes.io/region": "local",
        "topology.kubernetes.io/zone": zone,
        "node.kubernetes.io/instance-type": INSTANCE_TYPE,
      },
    },
    spec: simulatedTaint ? { taints: [SIMULATED_TAINT] } : {},
    status: {
      capacity: resources,
      allocatable: { ...resources, cpu: "15800m", memory: "62Gi" },
      // Both InternalIP and Hostname present, or kwok's node stage rewrites the list. 192.0.2.0/24
      // is TEST-NET-1: never routed, never dialled (the API server prefers InternalDNS, then
      // InternalIP: real nodes have no InternalDNS and are reached on their node IP).
      addresses: localNodeAddresses(index),
      nodeInfo: {
        architecture: "amd64",
        operatingSystem: "linux",
        kubeletVersion,
        kubeProxyVersion: kubeletVersion,
        containerRuntimeVersion: "kwok",
        kernelVersion: "kwok",
        osImage: "Ring0 simulated node (kwok)",
        bootID: "",
        machineID: "",
        systemUUID: "",
      },
      ...(kubeletPort ? { daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } } } : {}),
      phase: "Running",
    },
  };
}
