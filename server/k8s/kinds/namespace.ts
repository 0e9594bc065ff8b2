/** The Namespace kind. */
import type { V1Namespace } from "@kubernetes/client-node";
import { defineKind } from "./kind";

export type { V1Namespace };

export const NamespaceKind = defineKind<V1Namespace>({
  apiVersion: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
});
