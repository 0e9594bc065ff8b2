/** The Pod kind. */
import type { V1Pod } from "@kubernetes/client-node";
import { defineKind } from "./kind";

export type { V1Pod };

export const PodKind = defineKind<V1Pod>({ apiVersion: "v1", kind: "Pod", plural: "pods", namespaced: true });
