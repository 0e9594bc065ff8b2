/**
 * The record of a browser shell session: a row in exec_sessions (who, where, what, start, end,
 * exit code, bytes) and an audit event when it starts; a tenant whose Tenant sets
 * spec.streams.recordTranscripts keeps the session's output too (capped).
 */
import { recordAudit } from "@/server/audit/service";
import type { ExecQuery } from "@/server/core/stream-protocol";
import { getDb } from "@/server/db/client";
import { getSuperCluster } from "@/server/k8s/cluster";
import { tenantInformer } from "@/server/tenants/tenant-resources";
import { type ExecSessionEnd, finishExecSession, startExecSession } from "./sessions-repository";
import type { StreamContext } from "./upgrade";

/** Output kept per transcript at most. */
export const transcriptCap = 1024 * 1024;

export function recordsTranscripts(tenant: string | undefined): boolean {
  const conn = getSuperCluster();
  if (!tenant || !conn) return false;
  const found = tenantInformer(conn)
    .snapshot()
    .find((item) => item.metadata?.name === tenant);
  const streams = (found?.spec as { streams?: { recordTranscripts?: unknown } } | undefined)?.streams;
  return streams?.recordTranscripts === true;
}

export interface SessionRecord {
  id: string;
  finish(end: ExecSessionEnd): void;
}

export async function startRecord(
  context: StreamContext,
  query: ExecQuery,
  command: string[],
): Promise<SessionRecord> {
  const { user } = context;
  const tenant = query.source === "tenant-pod" ? (query.tenant ?? null) : null;
  const id = await startExecSession(getDb(), {
    userId: user.id,
    userName: user.name,
    userTenant: user.tenant,
    tenant,
    source: query.source,
    namespace: query.namespace ?? "",
    pod: query.pod ?? "",
    container: query.container ?? null,
    command,
  });
  const target = `${query.namespace}/${query.pod}${query.container ? `/${query.container}` : ""}`;
  await recordAudit({
    actorId: user.id,
    actorName: user.name,
    actorTenant: user.tenant,
    tenant,
    action:
      query.source === "tenant-pod"
        ? "pod.exec"
        : query.source === "node-shell"
          ? "node.shell"
          : "super-pod.exec",
    targetKind: query.source === "node-shell" ? "node" : "pod",
    target: query.source === "node-shell" ? (query.node ?? "") : target,
    result: "success",
    detail: {
      sessionId: id,
      shell: query.shell,
      via: "browser",
      ...(query.source === "node-shell" ? { pod: `${query.namespace}/${query.pod}` } : {}),
    },
  });
  let finished = false;
  return {
    id,
    finish(end) {
      if (finished) return;
      finished = true;
      finishExecSession(getDb(), id, end).catch((error: unknown) =>
        context.logger.warn("could not record the end of a shell session", { error }),
      );
    },
  };
}
