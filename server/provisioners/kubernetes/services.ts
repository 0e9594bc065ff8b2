/**
 * The Services of a tenant's control plane, applied first so their cluster IPs are known before the
 * certificates and workloads that name them: the API server's (Ring0, the controller manager and the
 * tenant's own pods dial it), etcd's client Service (the API server dials it), and the headless
 * Service the etcd StatefulSet is governed by. Every control-plane connection goes to a cluster IP,
 * so the control plane runs on super clusters that serve its pods no DNS (the local one's real
 * nodes answer only tenants' pods) and Ring0 reaches it from a host that resolves no Services.
 */
import type { KubeObject } from "@/server/k8s/apply";
import {
  APISERVER_NAME,
  APISERVER_PORT,
  controlPlaneNamespace,
  ETCD_CLIENT_SERVICE,
  ETCD_NAME,
  labels,
  selector,
} from "./naming";

export function controlPlaneServiceManifests(tenant: string): KubeObject[] {
  const namespace = controlPlaneNamespace(tenant);
  const etcdPorts = [{ name: "client", port: 2379, targetPort: 2379 }];
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: ETCD_NAME, namespace, labels: labels(tenant, ETCD_NAME) },
      spec: {
        clusterIP: "None",
        publishNotReadyAddresses: true,
        selector: selector(tenant, ETCD_NAME),
        ports: etcdPorts,
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: ETCD_CLIENT_SERVICE, namespace, labels: labels(tenant, ETCD_NAME) },
      spec: {
        type: "ClusterIP",
        // The API server must reach etcd before etcd's readiness probe passes (it probes etcd too).
        publishNotReadyAddresses: true,
        selector: selector(tenant, ETCD_NAME),
        ports: etcdPorts,
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: APISERVER_NAME, namespace, labels: labels(tenant, APISERVER_NAME) },
      spec: {
        type: "ClusterIP",
        selector: selector(tenant, APISERVER_NAME),
        ports: [{ name: "https", port: APISERVER_PORT, targetPort: APISERVER_PORT }],
      },
    },
  ];
}
