/** Kinds of the cluster's own machinery: leases (leader election) and CustomResourceDefinitions. */
import type { V1CustomResourceDefinition, V1Lease } from "@kubernetes/client-node";
import { defineKind } from "./kind";

export type { V1CustomResourceDefinition, V1Lease };

export const LeaseKind = defineKind<V1Lease>({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
});
export const CustomResourceDefinitionKind = defineKind<V1CustomResourceDefinition>({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  namespaced: false,
});
