/**
 * Embedded-IAM accounts kept in the database (besides the seed file's): what the IAM's login page
 * and `findAccount` read, and what tenant admins create and disable. The only Prisma code of the IAM.
 */
import type { PrismaClient } from "@/server/db/client";
import { Prisma } from "@/server/db/client";
import { ConflictError } from "@/server/errors";

/** An account row as the IAM needs it; the hash never leaves the server. */
export interface StoredAccount {
  tenant: string;
  username: string;
  name: string;
  email: string;
  passwordHash: string;
  disabled: boolean;
}

/** What the embedded IAM reads besides its seed file. */
export interface AccountDirectory {
  /** Every tenant's account with this username (usernames are unique per tenant only). */
  findByUsername(username: string): Promise<StoredAccount[]>;
  find(tenant: string, username: string): Promise<StoredAccount | undefined>;
}

/** An account as tenant admins see it. */
export interface AccountRow {
  username: string;
  tenant: string;
  name: string;
  email: string;
  disabled: boolean;
  disabledAt: Date | null;
  disabledBy: string | null;
  createdBy: string;
  createdAt: Date;
}

const storedFields = {
  tenant: true,
  username: true,
  name: true,
  email: true,
  passwordHash: true,
  disabled: true,
} as const;

const rowFields = {
  tenant: true,
  username: true,
  name: true,
  email: true,
  disabled: true,
  disabledAt: true,
  disabledBy: true,
  createdBy: true,
  createdAt: true,
} as const;

export function createIamAccountRepository(db: PrismaClient) {
  return {
    findByUsername: (username: string): Promise<StoredAccount[]> =>
      db.iamAccount.findMany({ where: { username }, select: storedFields, take: 10 }),

    async find(tenant: string, username: string): Promise<StoredAccount | undefined> {
      return (
        (await db.iamAccount.findUnique({
          where: { tenant_username: { tenant, username } },
          select: storedFields,
        })) ?? undefined
      );
    },

    list: (tenant: string): Promise<AccountRow[]> =>
      db.iamAccount.findMany({ where: { tenant }, select: rowFields, orderBy: { username: "asc" } }),

    async create(account: Omit<StoredAccount, "disabled"> & { createdBy: string }): Promise<AccountRow> {
      try {
        return await db.iamAccount.create({ data: account, select: rowFields });
      } catch (error) {
        if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
          throw new ConflictError(
            `username: "${account.username}" is already taken in tenant "${account.tenant}".`,
          );
        }
        throw error;
      }
    },

    /** Null when there is no such account. */
    async setDisabled(tenant: string, username: string, disabled: boolean, by: string, at: Date) {
      const result = await db.iamAccount.updateMany({
        where: { tenant, username },
        data: disabled
          ? { disabled: true, disabledAt: at, disabledBy: by }
          : { disabled: false, disabledAt: null, disabledBy: null },
      });
      if (result.count === 0) return null;
      return db.iamAccount.findUnique({
        where: { tenant_username: { tenant, username } },
        select: rowFields,
      });
    },
  };
}

export type IamAccountRepository = ReturnType<typeof createIamAccountRepository>;
