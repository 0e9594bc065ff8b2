import { TRPCError } from "@trpc/server";
import { tenantProcedure } from "@/server/api/trpc";
import { canManageMembers } from "@/server/auth/roles";

/**
 * The tenant tier plus `canManageMembers`: the tenant's admins and operators. Members of the tenant
 * get FORBIDDEN; people of other tenants never get this far (tenantProcedure answers NOT_FOUND).
 */
export const tenantAdminProcedure = tenantProcedure.use(({ ctx, next }) => {
  if (!canManageMembers(ctx.user, ctx.tenant)) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `Only admins of tenant "${ctx.tenant}" (and operators) can manage its members and accounts.`,
    });
  }
  return next();
});
