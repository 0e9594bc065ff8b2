/**
 * The record of browser shell sessions (exec_sessions), for the audit views: operators read all,
 * tenant admins their tenant's, others none — the audit log's own rules.
 */
import type { PrismaClient } from "@/server/db/client";

export interface ExecSessionQuery {
  /** Only this tenant's sessions (tenant admins are always confined to theirs). */
  tenant?: string;
  /** Id of the last session of the previous page. */
  cursor?: string;
  limit: number;
}

export interface ExecSessionRow {
  id: string;
  userName: string;
  userTenant: string;
  tenant: string | null;
  source: string;
  namespace: string;
  pod: string;
  container: string | null;
  command: string[];
  startedAt: Date;
  endedAt: Date | null;
  exitCode: number | null;
  endReason: string | null;
  bytesIn: number;
  bytesOut: number;
  hasTranscript: boolean;
}

export async function listExecSessions(
  db: PrismaClient,
  query: ExecSessionQuery,
): Promise<{ sessions: ExecSessionRow[]; nextCursor: string | null }> {
  const rows = await db.execSession.findMany({
    where: query.tenant ? { tenant: query.tenant } : {},
    orderBy: [{ startedAt: "desc" }, { id: "desc" }],
    take: query.limit + 1,
    ...(query.cursor ? { cursor: { id: query.cursor }, skip: 1 } : {}),
    omit: { transcript: true },
  });
  const withTranscripts = new Set(
    (
      await db.execSession.findMany({
        where: { id: { in: rows.map((row) => row.id) }, transcript: { not: null } },
        select: { id: true },
      })
    ).map((row) => row.id),
  );
  const page = rows.slice(0, query.limit);
  return {
    sessions: page.map((row) => ({
      id: row.id,
      userName: row.userName,
      userTenant: row.userTenant,
      tenant: row.tenant,
      source: row.source,
      namespace: row.namespace,
      pod: row.pod,
      container: row.container,
      command: Array.isArray(row.command) ? row.command.map(String) : [],
      startedAt: row.startedAt,
      endedAt: row.endedAt,
      exitCode: row.exitCode,
      endReason: row.endReason,
      bytesIn: Number(row.bytesIn),
      bytesOut: Number(row.bytesOut),
      hasTranscript: withTranscripts.has(row.id),
    })),
    nextCursor: rows.length > query.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

/** A session's transcript as text (the terminal's output, control sequences included). */
export async function execTranscript(
  db: PrismaClient,
  id: string,
): Promise<{ tenant: string | null; text: string } | null> {
  const row = await db.execSession.findUnique({ where: { id }, select: { tenant: true, transcript: true } });
  if (!row?.transcript) return null;
  return { tenant: row.tenant, text: Buffer.from(row.transcript).toString("utf8") };
}

/** What a session's start records: who, where and which command. */
export type ExecSessionStart = { userId: string } & Pick<
  ExecSessionRow,
  "userName" | "userTenant" | "tenant" | "source" | "namespace" | "pod" | "container" | "command"
>;

export interface ExecSessionEnd {
  exitCode: number | null;
  reason: string;
  bytesIn: number;
  bytesOut: number;
  transcript?: Buffer | Uint8Array | null;
}

/** Records a session's start; its id is what the audit event and the end refer to. */
export async function startExecSession(db: PrismaClient, start: ExecSessionStart): Promise<string> {
  const row = await db.execSession.create({ data: start, select: { id: true } });
  return row.id;
}

/** Records how a session ended (the reason cut to 500 characters, the transcript if kept). */
export async function finishExecSession(db: PrismaClient, id: string, end: ExecSessionEnd): Promise<void> {
  await db.execSession.update({
    where: { id },
    data: {
      endedAt: new Date(),
      exitCode: end.exitCode,
      endReason: end.reason.slice(0, 500),
      bytesIn: BigInt(end.bytesIn),
      bytesOut: BigInt(end.bytesOut),
      ...(end.transcript ? { transcript: new Uint8Array(end.transcript) } : {}),
    },
  });
}
