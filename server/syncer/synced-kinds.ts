/**
 * The kinds the syncer copies down and which of their objects it copies: the objects the super
 * cluster makes for itself stay in the tenant, and objects too big or malformed are refused.
 */

import type { KubeObject } from "@/server/k8s/apply";
import { reservedPolicyName } from "./network-policies";
import { IDENTITY_SECRET_PREFIX, identityRefusal } from "./pod-identity";

/** The kinds the syncer copies down (vNodes and events travel up, and claims' volumes). */
export type SyncedKind =
  | "namespace"
  | "pod"
  | "service"
  | "endpoints"
  | "configmap"
  | "secret"
  | "serviceaccount"
  | "persistentvolumeclaim"
  | "networkpolicy";

export const syncedKinds: SyncedKind[] = [
  "namespace",
  "serviceaccount",
  "configmap",
  "secret",
  "service",
  "endpoints",
  "persistentvolumeclaim",
  "networkpolicy",
  "pod",
];

export interface KindInfo {
  apiVersion: string;
  kind: string;
  /** The collection's path segment under /api/v1. */
  resource: string;
  namespaced: boolean;
}

export const kindInfo: Record<SyncedKind, KindInfo> = {
  namespace: { apiVersion: "v1", kind: "Namespace", resource: "namespaces", namespaced: false },
  pod: { apiVersion: "v1", kind: "Pod", resource: "pods", namespaced: true },
  service: { apiVersion: "v1", kind: "Service", resource: "services", namespaced: true },
  endpoints: { apiVersion: "v1", kind: "Endpoints", resource: "endpoints", namespaced: true },
  configmap: { apiVersion: "v1", kind: "ConfigMap", resource: "configmaps", namespaced: true },
  secret: { apiVersion: "v1", kind: "Secret", resource: "secrets", namespaced: true },
  serviceaccount: { apiVersion: "v1", kind: "ServiceAccount", resource: "serviceaccounts", namespaced: true },
  persistentvolumeclaim: {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    resource: "persistentvolumeclaims",
    namespaced: true,
  },
  networkpolicy: {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    resource: "networkpolicies",
    namespaced: true,
  },
};

/** A tenant object larger than this (serialised) is refused with an event instead of copied. */
export const maxObjectBytes = 512 * 1024;

/** Tenant namespaces that stay in the tenant: node leases are the control plane's own. */
const unsyncedNamespaces = new Set(["kube-node-lease"]);

/** A plain JSON object (the syncer works on API JSON, not client classes). */
export type Json = Record<string, unknown>;

export interface TenantObject extends KubeObject {
  spec?: Json;
  status?: Json;
  data?: Json;
  [key: string]: unknown;
}

/**
 * Whether the syncer copies this tenant object down at all. Objects the super cluster makes for
 * itself in every namespace (the root CA config map, the default service account, token secrets)
 * stay out: copying the tenant's would fight the super cluster's own controllers.
 */
export function isSynced(
  kind: SyncedKind,
  object: TenantObject,
  services?: (name: string) => TenantObject | undefined,
): boolean {
  const name = object.metadata.name;
  switch (kind) {
    case "namespace":
      return !unsyncedNamespaces.has(name);
    case "configmap":
      return name !== "kube-root-ca.crt";
    case "secret":
      // Names of pods' identity secrets below are Ring0's (pod-identity.ts).
      return (
        object.type !== "kubernetes.io/service-account-token" && !name.startsWith(IDENTITY_SECRET_PREFIX)
      );
    case "serviceaccount":
      return name !== "default";
    case "endpoints": {
      // The super cluster's endpoints controller fills endpoints of services with a selector from
      // the synced pods; only selector-less services need theirs copied.
      const service = services?.(name);
      return Boolean(service) && !(service?.spec as { selector?: unknown } | undefined)?.selector;
    }
    default:
      return true;
  }
}

/** Why a tenant object cannot be copied (too big, or not a well-formed object of its kind), or null. */
export function malformedReason(kind: SyncedKind, object: TenantObject): string | null {
  const size = JSON.stringify(object).length;
  if (size > maxObjectBytes) {
    return `${kindInfo[kind].kind} ${object.metadata.name} is ${size} bytes serialised; the syncer copies objects up to ${maxObjectBytes} bytes.`;
  }
  if (kind === "networkpolicy" && reservedPolicyName(object.metadata.name)) {
    return `NetworkPolicy ${object.metadata.name}: names starting "ring0-tenant-" are Ring0's own below; rename it.`;
  }
  if (kind === "pod") {
    const containers = (object.spec as { containers?: unknown } | undefined)?.containers;
    if (!Array.isArray(containers) || containers.length === 0) {
      return `Pod ${object.metadata.name} has no containers.`;
    }
    const identity = identityRefusal((object.spec ?? {}) as Json);
    if (identity) return identity;
  }
  return null;
}
