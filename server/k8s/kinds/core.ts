/**
 * The core (v1) kinds Ring0 reads and writes, beyond those with a module of their own (pod.ts,
 * node.ts, namespace.ts, event.ts).
 */
import type {
  V1ConfigMap,
  V1PersistentVolumeClaim,
  V1ResourceQuota,
  V1Secret,
  V1Service,
  V1ServiceAccount,
} from "@kubernetes/client-node";
import { defineKind } from "./kind";

export type { V1ConfigMap, V1PersistentVolumeClaim, V1ResourceQuota, V1Secret, V1Service, V1ServiceAccount };

export const ServiceKind = defineKind<V1Service>({
  apiVersion: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
});
export const ConfigMapKind = defineKind<V1ConfigMap>({
  apiVersion: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
});
export const SecretKind = defineKind<V1Secret>({
  apiVersion: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
});
export const PersistentVolumeClaimKind = defineKind<V1PersistentVolumeClaim>({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  plural: "persistentvolumeclaims",
  namespaced: true,
});
export const ResourceQuotaKind = defineKind<V1ResourceQuota>({
  apiVersion: "v1",
  kind: "ResourceQuota",
  plural: "resourcequotas",
  namespaced: true,
});
export const ServiceAccountKind = defineKind<V1ServiceAccount>({
  apiVersion: "v1",
  kind: "ServiceAccount",
  plural: "serviceaccounts",
  namespaced: true,
});
