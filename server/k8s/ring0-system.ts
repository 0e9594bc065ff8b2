/**
 * Ring0's own namespace in the super cluster: its Leases and operators' node shells live there
 * (the Helm chart installs Ring0 into it). One manifest, so every writer applies the same fields.
 */
export const RING0_SYSTEM_NAMESPACE = "ring0-system";

export const ring0SystemNamespace = {
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: RING0_SYSTEM_NAMESPACE, labels: { "app.kubernetes.io/managed-by": "ring0" } },
};
