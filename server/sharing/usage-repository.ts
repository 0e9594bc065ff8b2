import type { PrismaClient } from "@/server/db/client";

/** The audit actions of a grant's own history (its target is the grant's full name). */
export const grantChangeActions = [
  "share.create",
  "share.update",
  "share.approve",
  "share.revoke",
  "share.delete",
] as const;

/** One use of a grant by a grantee (`share.used`, written by the gateway and the streams). */
export interface GrantUse {
  id: string;
  at: Date;
  /** The grantee user, as the audit log names them. */
  who: string;
  whoTenant: string | null;
  verb: string | null;
  resource: string | null;
  namespace: string | null;
  name: string | null;
  via: string | null;
  count: number;
}

export interface GrantChange {
  id: string;
  at: Date;
  action: string;
  actorName: string;
  result: string;
  detail: unknown;
}

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : null);

/** Reads a grant's use and history from the audit log (owner tenant's events only). */
export function createGrantUsageRepository(db: PrismaClient) {
  return {
    /** Newest first; keyset pagination on (at, id) like the audit log's own list. */
    async uses(
      owner: string,
      grant: string,
      page: { cursor?: string | undefined; limit: number },
    ): Promise<{ uses: GrantUse[]; nextCursor: string | null }> {
      const rows = await db.auditEvent.findMany({
        where: { tenant: owner, action: "share.used", detail: { path: ["grant"], equals: grant } },
        orderBy: [{ at: "desc" }, { id: "desc" }],
        take: page.limit + 1,
        ...(page.cursor ? { cursor: { id: page.cursor }, skip: 1 } : {}),
        select: { id: true, at: true, actorName: true, actorTenant: true, detail: true },
      });
      const uses = rows.slice(0, page.limit).map((row) => {
        const detail = (row.detail ?? {}) as Record<string, unknown>;
        return {
          id: row.id,
          at: row.at,
          who: row.actorName,
          whoTenant: row.actorTenant,
          verb: text(detail.verb),
          resource: text(detail.resource),
          namespace: text(detail.namespace),
          name: text(detail.name),
          via: text(detail.via),
          count: typeof detail.count === "number" && detail.count > 0 ? detail.count : 1,
        };
      });
      return { uses, nextCursor: rows.length > page.limit ? (uses.at(-1)?.id ?? null) : null };
    },

    /** The grant's creation, edits, approvals, revocation and deletion, newest first. */
    async changes(owner: string, grant: string, limit = 100): Promise<GrantChange[]> {
      const rows = await db.auditEvent.findMany({
        where: { tenant: owner, target: grant, action: { in: [...grantChangeActions] } },
        orderBy: [{ at: "desc" }, { id: "desc" }],
        take: limit,
        select: { id: true, at: true, action: true, actorName: true, result: true, detail: true },
      });
      return rows.map((row) => ({ ...row, result: String(row.result) }));
    },
  };
}
