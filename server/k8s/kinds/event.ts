/** The (core/v1) Event kind. */
import type { CoreV1Event } from "@kubernetes/client-node";
import { defineKind } from "./kind";

export type { CoreV1Event };

export const EventKind = defineKind<CoreV1Event>({
  apiVersion: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
});
