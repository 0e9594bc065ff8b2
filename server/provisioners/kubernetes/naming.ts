/**
 * The names of a tenant's control plane in the super cluster: its namespace (`ring0-cp-<tenant>`),
 * the labels Ring0 finds its objects by, its Services and Secrets, the endpoint Ring0 uses and the
 * names its serving certificates carry.
 */
import { createHash } from "node:crypto";
import type { KubeObject } from "@/server/k8s/apply";
import type { PkiNames } from "../pki";

export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const TENANT_LABEL = "ring0.dev/tenant";
/** Marks a namespace as holding a tenant control plane (other Ring0 namespaces may carry the tenant label). */
export const CONTROL_PLANE_LABEL = "ring0.dev/control-plane";
const NAME_LABEL = "app.kubernetes.io/name";

export const NAMESPACE_PREFIX = "ring0-cp-";
export const APISERVER_NAME = "kube-apiserver";
export const CONTROLLER_MANAGER_NAME = "kube-controller-manager";
export const ETCD_NAME = "etcd";
export const PKI_SECRET = "control-plane-pki";
export const KUBECONFIG_SECRET = "control-plane-kubeconfigs";
export const APISERVER_PORT = 6443;

/** The tenant cluster's own Service range (inside the tenant, not the super cluster's). */
export const TENANT_SERVICE_CIDR = "10.96.0.0/16";
/** The `kubernetes` Service's address in that range, which the API server's certificate carries. */
const TENANT_KUBERNETES_SERVICE_IP = "10.96.0.1";

/**
 * The namespace of a tenant's control plane: `ring0-cp-<tenant>`, or, for a tenant name too long for
 * a 63-character namespace, a prefix of it plus a hash (the tenant label carries the full name).
 */
export function controlPlaneNamespace(tenant: string): string {
  const plain = `${NAMESPACE_PREFIX}${tenant}`;
  if (plain.length <= 63) return plain;
  const hash = createHash("sha256").update(tenant).digest("hex").slice(0, 10);
  return `${plain.slice(0, 63 - hash.length - 1).replace(/-+$/, "")}-${hash}`;
}

/** The URL Ring0 uses for the tenant's API server: its Service's DNS name, ClusterIP-independent. */
export function controlPlaneEndpoint(tenant: string): string {
  return `https://${APISERVER_NAME}.${controlPlaneNamespace(tenant)}.svc:${APISERVER_PORT}`;
}

/** The names the PKI's serving certificates carry. */
export function controlPlanePkiNames(tenant: string, clusterDomain: string): PkiNames {
  const namespace = controlPlaneNamespace(tenant);
  const serviceNames = (service: string) => [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.${clusterDomain}`,
  ];
  return {
    tenant,
    apiserverDnsNames: [
      ...serviceNames(APISERVER_NAME),
      // How workloads inside the tenant cluster name their API server.
      "kubernetes",
      "kubernetes.default",
      "kubernetes.default.svc",
      `kubernetes.default.svc.${clusterDomain}`,
      "localhost",
    ],
    apiserverIpAddresses: ["127.0.0.1", TENANT_KUBERNETES_SERVICE_IP],
    etcdDnsNames: [
      ...serviceNames(ETCD_NAME),
      `${ETCD_NAME}-0.${ETCD_NAME}.${namespace}.svc`,
      `${ETCD_NAME}-0.${ETCD_NAME}.${namespace}.svc.${clusterDomain}`,
      "localhost",
    ],
    etcdIpAddresses: ["127.0.0.1"],
  };
}

export function labels(tenant: string, name?: string): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: "ring0",
    [TENANT_LABEL]: tenant,
    "app.kubernetes.io/part-of": "ring0-control-plane",
    ...(name ? { [NAME_LABEL]: name, "app.kubernetes.io/component": "control-plane" } : {}),
  };
}

export function selector(tenant: string, name: string): Record<string, string> {
  return { [NAME_LABEL]: name, [TENANT_LABEL]: tenant };
}

export function namespaceManifest(tenant: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: controlPlaneNamespace(tenant),
      labels: {
        ...labels(tenant),
        [CONTROL_PLANE_LABEL]: "kubernetes",
        // The control plane's pods need nothing privileged.
        "pod-security.kubernetes.io/enforce": "restricted",
      },
    },
  };
}
