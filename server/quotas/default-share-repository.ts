/**
 * Tenants' default namespace shares in the database (NamespaceQuotaDefault), and a short-lived cache
 * of them for the hot paths (the syncer on each new namespace, the webhook on each namespace create).
 */
import type { PrismaClient } from "@/server/db/client";
import { getDb, type Prisma } from "@/server/db/client";

export interface DefaultShareRow {
  tenant: string;
  /** Canonical resource name → quantity (validated before it was stored). */
  hard: Record<string, string>;
  updatedBy: string;
  updatedAt: Date;
}

function hardOf(stored: Prisma.JsonValue): Record<string, string> {
  return stored && typeof stored === "object" && !Array.isArray(stored)
    ? Object.fromEntries(Object.entries(stored).map(([key, value]) => [key, String(value)]))
    : {};
}

export function createDefaultShareRepository(db: PrismaClient) {
  return {
    async find(tenant: string): Promise<DefaultShareRow | null> {
      const found = await db.namespaceQuotaDefault.findUnique({ where: { tenant } });
      return found ? { ...found, hard: hardOf(found.hard) } : null;
    },

    /** Sets the tenant's default share; resolves the one it replaced. */
    async set(
      tenant: string,
      hard: Record<string, string>,
      updatedBy: string,
    ): Promise<{ before: DefaultShareRow | null; after: DefaultShareRow }> {
      return db.$transaction(async (tx) => {
        const before = await tx.namespaceQuotaDefault.findUnique({ where: { tenant } });
        const after = await tx.namespaceQuotaDefault.upsert({
          where: { tenant },
          create: { tenant, hard, updatedBy },
          update: { hard, updatedBy },
        });
        return {
          before: before ? { ...before, hard: hardOf(before.hard) } : null,
          after: { ...after, hard: hardOf(after.hard) },
        };
      });
    },

    /** Removes the tenant's default share; resolves what it was (null: there was none). */
    async clear(tenant: string): Promise<DefaultShareRow | null> {
      return db.$transaction(async (tx) => {
        const before = await tx.namespaceQuotaDefault.findUnique({ where: { tenant } });
        if (!before) return null;
        await tx.namespaceQuotaDefault.delete({ where: { tenant } });
        return { ...before, hard: hardOf(before.hard) };
      });
    },
  };
}

export type DefaultShareRepository = ReturnType<typeof createDefaultShareRepository>;

/**
 * tenant → its default share (undefined: none), read through a cache of `ttlMs` per tenant: a change
 * reaches new namespaces within that time. The database is read lazily (getDb() at first use).
 */
export function cachedDefaultShares(
  options: { ttlMs?: number; db?: () => PrismaClient; now?: () => number } = {},
): (tenant: string) => Promise<Record<string, string> | undefined> {
  const ttlMs = options.ttlMs ?? 10_000;
  const now = options.now ?? Date.now;
  const db = options.db ?? getDb;
  const cache = new Map<string, { at: number; hard: Promise<Record<string, string> | undefined> }>();
  return (tenant) => {
    const cached = cache.get(tenant);
    if (cached && now() - cached.at < ttlMs) return cached.hard;
    const hard = createDefaultShareRepository(db())
      .find(tenant)
      .then((row) => (row && Object.keys(row.hard).length > 0 ? row.hard : undefined));
    // A failed read is not kept: the next caller asks again.
    hard.catch(() => cache.delete(tenant));
    cache.set(tenant, { at: now(), hard });
    return hard;
  };
}
