/**
 * A vNode's content from its super node (pure): the labels, capacity, conditions and node info it
 * carries, and the kubelet endpoint of the node's vn-agent; and its status with fresh heartbeats.
 */
import type { Json } from "./synced-kinds";

/** Label on vNodes in a tenant control plane (what the syncer lists and garbage-collects). */
export const vNodeLabel = "ring0.dev/vnode";
/** Annotation on a vNode that no vn-agent serves (logs and exec cannot reach it). */
export const vnAgentAnnotation = "ring0.dev/vn-agent";
export const defaultKubeletPort = 10250;

/** Node fields the vNode carries from its super node (the parts that change rarely). */
export function vNodeContent(
  superNode: Json,
  port: number | undefined,
  /** Where the tenant's API server reaches the vn-agents (session.kubeletHost). */
  host = "localhost",
): { labels: Record<string, string>; annotations: Record<string, string>; status: Json } {
  const metadata = (superNode.metadata ?? {}) as {
    name?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  const status = (superNode.status ?? {}) as Json;
  const labels: Record<string, string> = { [vNodeLabel]: "true" };
  for (const [key, value] of Object.entries(metadata.labels ?? {})) {
    if (
      key.startsWith("kubernetes.io/") ||
      key.startsWith("topology.kubernetes.io/") ||
      key.startsWith("node.kubernetes.io/instance-type")
    ) {
      labels[key] = value;
    }
  }
  const annotations: Record<string, string> = {};
  annotations[vnAgentAnnotation] =
    port === undefined
      ? `none: no vn-agent serves node ${metadata.name ?? ""}; kubectl logs and exec cannot reach its pods`
      : `${host}:${port}`;
  const conditions = ((status.conditions as Json[] | undefined) ?? []).map((condition) => {
    const { lastHeartbeatTime: _heartbeat, ...rest } = condition;
    return rest;
  });
  return {
    labels,
    annotations,
    status: {
      capacity: status.capacity ?? {},
      allocatable: status.allocatable ?? {},
      conditions,
      nodeInfo: status.nodeInfo ?? {},
      // What the node's kubelet supports, which the tenant's API server weighs (e.g. for resize).
      ...(status.features ? { features: status.features } : {}),
      ...(Array.isArray(status.declaredFeatures) ? { declaredFeatures: status.declaredFeatures } : {}),
      // The kubelet is reached at localhost (the vn-agent's port); a node a real kubelet runs also
      // shows its InternalIP, which its pods see as their hostIP anyway and reach NodePorts on. A
      // simulated (kwok) node's made-up address is never shown: nothing may dial it.
      addresses: [
        { type: "Hostname", address: host },
        ...(metadata.annotations?.["kwok.x-k8s.io/node"] === undefined
          ? ((status.addresses as Json[] | undefined) ?? [])
              .filter((address) => address.type === "InternalIP" && typeof address.address === "string")
              .map((address) => ({ type: "InternalIP", address: address.address }))
          : []),
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: port ?? defaultKubeletPort } },
    },
  };
}

/** The vNode's status with every condition's heartbeat set to now (Ring0 stands in for the kubelet). */
export function vNodeStatus(content: Json, nowIso: string): Json {
  const conditions: Json[] = ((content.conditions as Json[] | undefined) ?? []).map((condition) => ({
    ...condition,
    lastHeartbeatTime: nowIso,
  }));
  if (!conditions.some((condition) => condition.type === "Ready")) {
    conditions.push({
      type: "Ready",
      status: "True",
      reason: "KubeletReady",
      message: "the super-cluster node reports no Ready condition; Ring0 keeps the vNode Ready",
      lastHeartbeatTime: nowIso,
      lastTransitionTime: nowIso,
    });
  }
  return { ...content, conditions };
}
