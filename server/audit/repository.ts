import type { PrismaClient } from "@/server/db/client";

export type AuditResult = "success" | "failure" | "denied";

export interface AuditEventInput {
  actorId?: string | null;
  actorName: string;
  actorTenant?: string | null;
  /** The tenant the event concerns; tenant admins read their tenant's events. */
  tenant?: string | null;
  /** Dotted verb, e.g. `auth.sign-in`. */
  action: string;
  targetKind?: string | null;
  target?: string | null;
  result: AuditResult;
  requestId?: string | null;
  detail?: Record<string, unknown> | null;
}

export interface AuditQuery {
  tenant?: string;
  action?: string;
  /** Id of the last event of the previous page. */
  cursor?: string;
  limit: number;
}

export interface AuditEventRow {
  id: string;
  at: Date;
  actorName: string;
  actorTenant: string | null;
  tenant: string | null;
  action: string;
  targetKind: string | null;
  target: string | null;
  result: AuditResult;
  requestId: string | null;
}

export function createAuditRepository(db: PrismaClient) {
  return {
    async record(event: AuditEventInput): Promise<void> {
      await db.auditEvent.create({
        data: {
          actorId: event.actorId ?? null,
          actorName: event.actorName,
          actorTenant: event.actorTenant ?? null,
          tenant: event.tenant ?? null,
          action: event.action,
          targetKind: event.targetKind ?? null,
          target: event.target ?? null,
          result: event.result,
          requestId: event.requestId ?? null,
          ...(event.detail ? { detail: event.detail as object } : {}),
        },
      });
    },

    /** Newest first; keyset pagination on (at, id) so pages stay stable while events arrive. */
    async list(query: AuditQuery): Promise<{ events: AuditEventRow[]; nextCursor: string | null }> {
      const rows = await db.auditEvent.findMany({
        where: {
          ...(query.tenant ? { tenant: query.tenant } : {}),
          ...(query.action ? { action: { startsWith: query.action } } : {}),
        },
        orderBy: [{ at: "desc" }, { id: "desc" }],
        take: query.limit + 1,
        ...(query.cursor ? { cursor: { id: query.cursor }, skip: 1 } : {}),
        select: {
          id: true,
          at: true,
          actorName: true,
          actorTenant: true,
          tenant: true,
          action: true,
          targetKind: true,
          target: true,
          result: true,
          requestId: true,
        },
      });
      const page = rows.slice(0, query.limit) as AuditEventRow[];
      return { events: page, nextCursor: rows.length > query.limit ? (page.at(-1)?.id ?? null) : null };
    },
  };
}

export type AuditRepository = ReturnType<typeof createAuditRepository>;
