/**
 * The Pod kind, and what every pod row of the panel shows (the tenant's workloads, the super
 * cluster's pods, a node's pods): pure functions over the API object.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { defineKind } from "./kind";

export type { V1Pod };

export const PodKind = defineKind<V1Pod>({ apiVersion: "v1", kind: "Pod", plural: "pods", namespaced: true });

export interface PodSummary {
  namespace: string;
  name: string;
  /** The pod's phase, or "Terminating" once it is being deleted. */
  phase: string;
  /** The node it is bound to; null while unscheduled. */
  node: string | null;
  /** Ready containers of all, e.g. "1/2". */
  ready: string;
  restarts: number;
  createdAt: string | null;
}

export interface ContainerSummary {
  name: string;
  image: string;
  ready: boolean;
  restarts: number;
  /** running, waiting or terminated. */
  state: "running" | "waiting" | "terminated";
  /** Since when it runs; why it waits; how it ended (reason, exit code, message). */
  detail: string | null;
}

const iso = (value: unknown): string | null => (value ? new Date(String(value)).toISOString() : null);

export function summarisePod(pod: V1Pod): PodSummary {
  const statuses = pod.status?.containerStatuses ?? [];
  return {
    namespace: pod.metadata?.namespace ?? "",
    name: pod.metadata?.name ?? "",
    phase: pod.metadata?.deletionTimestamp ? "Terminating" : (pod.status?.phase ?? "Unknown"),
    node: pod.spec?.nodeName || null,
    ready: `${statuses.filter((status) => status.ready).length}/${pod.spec?.containers?.length ?? 0}`,
    restarts: statuses.reduce((sum, status) => sum + (status.restartCount ?? 0), 0),
    createdAt: iso(pod.metadata?.creationTimestamp),
  };
}

/** The pod's containers in spec order, with their status. */
export function summariseContainers(pod: V1Pod): ContainerSummary[] {
  const statuses = new Map((pod.status?.containerStatuses ?? []).map((status) => [status.name, status]));
  return (pod.spec?.containers ?? []).map((container) => {
    const status = statuses.get(container.name);
    const state = status?.state;
    let summary: ContainerSummary["state"] = "waiting";
    let detail: string | null = null;
    if (state?.running) {
      summary = "running";
      detail = state.running.startedAt ? `since ${iso(state.running.startedAt)}` : null;
    } else if (state?.terminated) {
      summary = "terminated";
      detail = [state.terminated.reason, `exit code ${state.terminated.exitCode}`, state.terminated.message]
        .filter(Boolean)
        .join(" · ");
    } else if (state?.waiting) {
      detail = [state.waiting.reason, state.waiting.message].filter(Boolean).join(": ") || null;
    }
    return {
      name: container.name,
      image: status?.image || container.image || "",
      ready: status?.ready ?? false,
      restarts: status?.restartCount ?? 0,
      state: summary,
      detail,
    };
  });
}

/** Rows in "namespace/name" order. */
export const byNamespacedName = (a: PodSummary, b: PodSummary) =>
  `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`);
