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
/** Which component of the control plane a pod or object is (kube-apiserver, etcd, …). */
export const CONTROL_PLANE_NAME_LABEL = "app.kubernetes.io/name";

export const NAMESPACE_PREFIX = "ring0-cp-";
export const APISERVER_NAME = "kube-apiserver";
export const CONTROLLER_MANAGER_NAME = "kube-controller-manager";
export const ETCD_NAME = "etcd";
/** etcd's client Service: a cluster IP the API server dials, so the control plane needs no cluster DNS. */
export const ETCD_CLIENT_SERVICE = "etcd-client";
export const PKI_SECRET = "control-plane-pki";
export const KUBECONFIG_SECRET = "control-plane-kubeconfigs";
/** The API server's kubelet client certificate (from Ring0's vn-agent client CA) and the agents' CA. */
export const KUBELET_CLIENT_SECRET = "control-plane-kubelet-client";
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

/**
 * The tenant API server's name in the super cluster's DNS: its service-account issuer, and a name its
 * certificate carries for clients that resolve it. Ring0 and the control plane itself dial cluster
 * IPs (ControlPlaneAddresses): a super cluster need not serve DNS to the control plane's pods, nor
 * Ring0's host resolve Services.
 */
export function controlPlaneServiceName(tenant: string): string {
  return `https://${APISERVER_NAME}.${controlPlaneNamespace(tenant)}.svc:${APISERVER_PORT}`;
}

/** The cluster IPs of a control plane's Services, as the super cluster allocated them. */
export interface ControlPlaneAddresses {
  /** The API server's Service: Ring0, the controller manager and the tenant's pods dial it. */
  apiserver: string;
  /** etcd's client Service: the API server dials it. */
  etcd: string;
}

/** The URL of the tenant API server: its Service's cluster IP (its certificate names that address). */
export function controlPlaneUrl(addresses: ControlPlaneAddresses): string {
  return `https://${addresses.apiserver}:${APISERVER_PORT}`;
}

/** The names the PKI's serving certificates carry (and the Services' cluster IPs, once known). */
export function controlPlanePkiNames(
  tenant: string,
  clusterDomain: string,
  addresses?: ControlPlaneAddresses,
): PkiNames {
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
    apiserverIpAddresses: [
      "127.0.0.1",
      TENANT_KUBERNETES_SERVICE_IP,
      ...(addresses ? [addresses.apiserver] : []),
    ],
    etcdDnsNames: [
      ...serviceNames(ETCD_NAME),
      ...serviceNames(ETCD_CLIENT_SERVICE),
      `${ETCD_NAME}-0.${ETCD_NAME}.${namespace}.svc`,
      `${ETCD_NAME}-0.${ETCD_NAME}.${namespace}.svc.${clusterDomain}`,
      "localhost",
    ],
    etcdIpAddresses: ["127.0.0.1", ...(addresses ? [addresses.etcd] : [])],
  };
}

export function labels(tenant: string, name?: string): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: "ring0",
    [TENANT_LABEL]: tenant,
    "app.kubernetes.io/part-of": "ring0-control-plane",
    ...(name ? { [CONTROL_PLANE_NAME_LABEL]: name, "app.kubernetes.io/component": "control-plane" } : {}),
  };
}

export function selector(tenant: string, name: string): Record<string, string> {
  return { [CONTROL_PLANE_NAME_LABEL]: name, [TENANT_LABEL]: tenant };
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
