/**
 * What Ring0's database holds of a tenant's people beyond the Tenant object: their API tokens,
 * memberships and embedded-IAM accounts. A deleted tenant's go with it, in one transaction.
 */
import type { PrismaClient } from "@/server/db/client";

export type ForgottenAccess = {
  revokedTokens: number;
  removedMemberships: number;
  deletedAccounts: number;
};

export function createTenantRepository(db: PrismaClient) {
  return {
    /** Revokes the tenant's API tokens (kept, for the audit trail) and deletes its memberships and accounts. */
    async forgetAccess(tenant: string, at: Date): Promise<ForgottenAccess> {
      const [tokens, memberships, accounts] = await db.$transaction([
        db.apiToken.updateMany({
          where: { tenant, revokedAt: null },
          data: { revokedAt: at, revokedBy: "Ring0 (tenant deleted)" },
        }),
        db.membership.deleteMany({ where: { tenant } }),
        db.iamAccount.deleteMany({ where: { tenant } }),
      ]);
      return {
        revokedTokens: tokens.count,
        removedMemberships: memberships.count,
        deletedAccounts: accounts.count,
      };
    },
  };
}
