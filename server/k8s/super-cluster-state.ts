/**
 * Why the super cluster is not connected, shared through globalThis between the custom server
 * (which connects it) and route handlers (which report it in /api/ready). It imports only
 * the process-slot leaf, so route bundles do not pull in the cluster tooling.
 */
import { processSlot } from "@/server/core/process-slots";

const problem = processSlot<string | null>("superClusterProblem");

export function superClusterProblem(): string | null {
  return problem.get() ?? null;
}

export function setSuperClusterProblem(value: string | null): void {
  problem.set(value);
}

const healing = processSlot<string | null>("superClusterHealing");

/** What of the (connected) local super cluster is being started again, while that lasts. */
export function superClusterHealing(): string | null {
  return healing.get() ?? null;
}

export function setSuperClusterHealing(value: string | null): void {
  healing.set(value);
}
