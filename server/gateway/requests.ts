/**
 * What a request through the gateway is, in Kubernetes' terms: the verb an audit event names, whether
 * it mutates, whether it runs long (watches, followed logs, upgrades), and how its outcome reads.
 */
import type { AuditResult } from "@/server/audit/repository";
import { queryFlag } from "@/server/sharing/request-info";

const mutatingVerbs: Record<string, string> = {
  POST: "create",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};

const streamingSubresources = new Set(["exec", "attach", "portforward"]);

function lastSegment(apiPath: string): string {
  const segments = apiPath.split("/").filter(Boolean);
  return segments.at(-1) ?? "";
}

/**
 * The audited verb (`create`, `delete`, `exec`…), or null for a read. Every upgrade is audited:
 * exec, attach and port-forward by name, anything else as `connect`.
 */
export function auditedVerb(method: string, apiPath: string, upgrade: boolean): string | null {
  const subresource = lastSegment(apiPath);
  if (streamingSubresources.has(subresource) && (upgrade || method === "POST")) return subresource;
  if (upgrade) return "connect";
  return mutatingVerbs[method.toUpperCase()] ?? null;
}

/** Watches and followed logs hold a connection open; they count against the long-running cap. */
export function isLongRunning(method: string, apiPath: string, query: URLSearchParams): boolean {
  if (method.toUpperCase() !== "GET") return false;
  // The API server's reading of a boolean parameter ("yes" is true): the same as authorisation's.
  if (queryFlag(query.get("watch"))) return true;
  // Deprecated watch paths: /api/v1/watch/…, /apis/<group>/<version>/watch/…
  if (/^\/(api\/[^/]+|apis\/[^/]+\/[^/]+)\/watch(\/|$)/.test(apiPath)) return true;
  return lastSegment(apiPath) === "log" && queryFlag(query.get("follow"));
}

export function auditResult(status: number): AuditResult {
  if (status === 401 || status === 403) return "denied";
  return status < 400 ? "success" : "failure";
}
