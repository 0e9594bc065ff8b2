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
