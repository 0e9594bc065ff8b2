/** The RBAC kinds Ring0 writes (tenant admins' roles, sharing grants' roles and bindings). */
import type { V1ClusterRole, V1ClusterRoleBinding, V1Role, V1RoleBinding } from "@kubernetes/client-node";
import { defineKind } from "./kind";

export type { V1ClusterRole, V1ClusterRoleBinding, V1Role, V1RoleBinding };

const rbac = "rbac.authorization.k8s.io/v1";

export const ClusterRoleKind = defineKind<V1ClusterRole>({
  apiVersion: rbac,
  kind: "ClusterRole",
  plural: "clusterroles",
  namespaced: false,
});
export const ClusterRoleBindingKind = defineKind<V1ClusterRoleBinding>({
  apiVersion: rbac,
  kind: "ClusterRoleBinding",
  plural: "clusterrolebindings",
  namespaced: false,
});
export const RoleKind = defineKind<V1Role>({
  apiVersion: rbac,
  kind: "Role",
  plural: "roles",
  namespaced: true,
});
export const RoleBindingKind = defineKind<V1RoleBinding>({
  apiVersion: rbac,
  kind: "RoleBinding",
  plural: "rolebindings",
  namespaced: true,
});
