/**
 * Why the super cluster is not connected, shared through globalThis between the custom server
 * (which connects it) and route handlers (which report it in /api/ready). Kept free of imports
 * so route bundles do not pull in the cluster tooling.
 */
const problemKey = Symbol.for("ring0.superClusterProblem");
type ProblemHolder = typeof globalThis & { [problemKey]?: string | null };

export function superClusterProblem(): string | null {
  return (globalThis as ProblemHolder)[problemKey] ?? null;
}

export function setSuperClusterProblem(problem: string | null): void {
  (globalThis as ProblemHolder)[problemKey] = problem;
}
