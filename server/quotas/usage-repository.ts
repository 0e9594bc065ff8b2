/**
 * The quota history tables: QuotaSample (written by the sampler, read by the charts and the
 * overview) and QuotaRefusal (written by the admission webhook, read by "why was this refused").
 */
import type { PrismaClient } from "@/server/db/client";

export interface RefusalRow {
  id: string;
  firstAt: Date;
  lastAt: Date;
  count: number;
  user: string | null;
  operation: string;
  kind: string;
  namespace: string | null;
  name: string | null;
  exceeded: { resource: string; requested: string; used: string; limit: string }[];
  message: string;
}

function exceededOf(value: unknown): RefusalRow["exceeded"] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((entry): entry is Record<string, unknown> => !!entry && typeof entry === "object")
    .map((entry) => ({
      resource: String(entry.resource ?? ""),
      requested: String(entry.requested ?? ""),
      used: String(entry.used ?? ""),
      limit: String(entry.limit ?? ""),
    }));
}

/** A refusal as stored: quantities already formatted as Kubernetes prints them. */
export interface NewRefusal {
  tenant: string;
  user: string | null;
  operation: string;
  kind: string;
  namespace: string | null;
  name: string | null;
  exceeded: RefusalRow["exceeded"];
  message: string;
}

export function createQuotaUsageRepository(db: PrismaClient) {
  return {
    async addSample(sample: {
      tenant: string;
      at: Date;
      used: Record<string, string>;
      hard: Record<string, string>;
    }) {
      await db.quotaSample.create({ data: sample });
    },

    /** Drops the samples taken before `before` (the retention window). */
    async deleteSamplesBefore(before: Date): Promise<void> {
      await db.quotaSample.deleteMany({ where: { at: { lt: before } } });
    },

    /**
     * Records a refusal at `now`; one equal to a refusal recorded since `coalesceSince` (same tenant,
     * object and message) bumps that row's count instead of adding one.
     */
    async recordRefusal(refusal: NewRefusal, now: Date, coalesceSince: Date): Promise<void> {
      const same = await db.quotaRefusal.findFirst({
        where: {
          tenant: refusal.tenant,
          kind: refusal.kind,
          namespace: refusal.namespace,
          name: refusal.name,
          message: refusal.message,
          lastAt: { gte: coalesceSince },
        },
        orderBy: { lastAt: "desc" },
        select: { id: true },
      });
      if (same) {
        await db.quotaRefusal.update({
          where: { id: same.id },
          data: { count: { increment: 1 }, lastAt: now, user: refusal.user },
        });
        return;
      }
      await db.quotaRefusal.create({ data: { ...refusal, firstAt: now, lastAt: now } });
    },

    /** Samples of one tenant since `since`, oldest first (only the columns a chart needs). */
    samplesSince(tenant: string, since: Date) {
      return db.quotaSample.findMany({
        where: { tenant, at: { gte: since } },
        orderBy: { at: "asc" },
        select: { at: true, used: true, hard: true },
      });
    },

    /** Each tenant's newest sample. */
    async latestSamples(): Promise<{ tenant: string; at: Date; used: unknown; hard: unknown }[]> {
      return db.quotaSample.findMany({
        distinct: ["tenant"],
        orderBy: [{ tenant: "asc" }, { at: "desc" }],
        select: { tenant: true, at: true, used: true, hard: true },
      });
    },

    async latestSample(tenant: string) {
      return db.quotaSample.findFirst({
        where: { tenant },
        orderBy: { at: "desc" },
        select: { at: true, used: true, hard: true },
      });
    },

    /** Refusals newest first, `limit` per page; the cursor is the last row's id. */
    async refusals(
      tenant: string,
      page: { cursor?: string; limit: number },
    ): Promise<{ items: RefusalRow[]; nextCursor: string | null }> {
      const rows = await db.quotaRefusal.findMany({
        where: { tenant },
        orderBy: [{ lastAt: "desc" }, { id: "desc" }],
        take: page.limit + 1,
        ...(page.cursor ? { cursor: { id: page.cursor }, skip: 1 } : {}),
      });
      const items = rows.slice(0, page.limit).map((row) => ({
        id: row.id,
        firstAt: row.firstAt,
        lastAt: row.lastAt,
        count: row.count,
        user: row.user,
        operation: row.operation,
        kind: row.kind,
        namespace: row.namespace,
        name: row.name,
        exceeded: exceededOf(row.exceeded),
        message: row.message,
      }));
      return { items, nextCursor: rows.length > page.limit ? (items.at(-1)?.id ?? null) : null };
    },
  };
}
