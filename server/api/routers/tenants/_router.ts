import { createTRPCRouter, operatorProcedure, tenantProcedure } from "@/server/api/trpc";
import { canManageMembers } from "@/server/auth/roles";
import { createUserRepository } from "@/server/users/repository";

export const tenantsRouter = createTRPCRouter({
  /** Operators: every tenant Ring0 knows of, with member counts. */
  list: operatorProcedure.query(({ ctx }) => createUserRepository(ctx.db).tenantSummaries()),

  /** A tenant's portal overview; only its members (and operators) get past the tier. */
  overview: tenantProcedure.query(async ({ ctx }) => {
    const members = await createUserRepository(ctx.db).members(ctx.tenant);
    return {
      tenant: ctx.tenant,
      viewerRole: ctx.user.role,
      canManageMembers: canManageMembers(ctx.user, ctx.tenant),
      memberCount: members.length,
      adminCount: members.filter((member) => member.role === "tenant-admin").length,
    };
  }),

  members: tenantProcedure.query(({ ctx }) => createUserRepository(ctx.db).members(ctx.tenant)),
});
