import type { PrismaClient } from "@/server/db/client";
import type { TokenVisibility } from "@/server/tokens/policy";

/** A token as lists show it: never the hash, and the plaintext was never stored. */
export interface TokenRow {
  id: string;
  userId: string;
  ownerName: string;
  tenant: string;
  name: string;
  prefix: string;
  expiresAt: Date;
  revokedAt: Date | null;
  revokedBy: string | null;
  lastUsedAt: Date | null;
  createdAt: Date;
}

export interface NewToken {
  userId: string;
  tenant: string;
  name: string;
  prefix: string;
  hash: string;
  expiresAt: Date;
}

/** What verification needs: the row, its hash and its owner. */
export interface TokenWithOwner extends TokenRow {
  hash: string;
  owner: { id: string; subject: string; name: string; email: string | null; tenant: string };
}

const rowSelect = {
  id: true,
  userId: true,
  tenant: true,
  name: true,
  prefix: true,
  expiresAt: true,
  revokedAt: true,
  revokedBy: true,
  lastUsedAt: true,
  createdAt: true,
  user: { select: { name: true } },
} as const;

function toRow({ user, ...row }: { user: { name: string } } & Omit<TokenRow, "ownerName">): TokenRow {
  return { ...row, ownerName: user.name };
}

function visibleWhere(visibility: TokenVisibility) {
  if ("all" in visibility) return {};
  if ("tenant" in visibility) return { OR: [{ tenant: visibility.tenant }, { userId: visibility.userId }] };
  return { userId: visibility.userId };
}

export function createTokenRepository(db: PrismaClient) {
  return {
    async create(token: NewToken): Promise<TokenRow> {
      return toRow(await db.apiToken.create({ data: token, select: rowSelect }));
    },

    async findByHash(hash: string): Promise<TokenWithOwner | null> {
      const found = await db.apiToken.findUnique({
        where: { hash },
        select: {
          ...rowSelect,
          hash: true,
          user: { select: { id: true, subject: true, name: true, email: true, tenant: true } },
        },
      });
      if (!found) return null;
      return { ...toRow(found), hash: found.hash, owner: found.user };
    },

    async findById(id: string): Promise<TokenRow | null> {
      const found = await db.apiToken.findUnique({ where: { id }, select: rowSelect });
      return found ? toRow(found) : null;
    },

    /** Newest first. */
    async list(visibility: TokenVisibility, tenant?: string): Promise<TokenRow[]> {
      const rows = await db.apiToken.findMany({
        where: { AND: [visibleWhere(visibility), tenant ? { tenant } : {}] },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        select: rowSelect,
      });
      return rows.map(toRow);
    },

    /** Sets revokedAt once; a token already revoked keeps who revoked it first. True if this call revoked it. */
    async revoke(id: string, at: Date, by: string): Promise<boolean> {
      const result = await db.apiToken.updateMany({
        where: { id, revokedAt: null },
        data: { revokedAt: at, revokedBy: by },
      });
      return result.count > 0;
    },

    /**
     * Records a use unless one was recorded since `notBefore`. The condition lives in the UPDATE so
     * concurrent requests with the same token write once.
     */
    async recordUse(id: string, at: Date, notBefore: Date): Promise<boolean> {
      const result = await db.apiToken.updateMany({
        where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: notBefore } }] },
        data: { lastUsedAt: at },
      });
      return result.count > 0;
    },
  };
}

export type TokenRepository = ReturnType<typeof createTokenRepository>;
