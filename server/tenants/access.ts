import { canAccessTenant, isOperator, type SessionUser } from "@/server/core/roles";
import { tenantNamePattern } from "@/server/core/tenant-name";
import { getDb, type PrismaClient } from "@/server/db/client";
import { createUserRepository } from "@/server/users/repository";

/**
 * The tenant a user may open, or null. Same rule as tRPC's tenantProcedure: operators reach every
 * tenant, others only a tenant they are a current member of.
 */
export async function tenantForUser(
  user: SessionUser,
  tenant: string,
  db: PrismaClient = getDb(),
): Promise<string | null> {
  if (!tenantNamePattern.test(tenant) || !canAccessTenant(user, tenant)) return null;
  if (isOperator(user)) return tenant;
  const role = await createUserRepository(db).membershipRole(user.id, tenant);
  return role ? tenant : null;
}
