import { createTRPCRouter, tenantProcedure } from "@/server/api/trpc";
import { isTenantAdmin } from "@/server/core/roles";
import { createMembersService, currentIamMode } from "@/server/users/members-service";
import { membersInviteInput, membersRemoveInput, membersSetRoleInput } from "./members.schema";
import { tenantAdminProcedure } from "./procedures";

export const membersRouter = createTRPCRouter({
  /** The tenant's members; any member may read them, admins also get the controls. */
  list: tenantProcedure.query(async ({ ctx }) => ({
    members: await createMembersService({ db: ctx.db }).list(ctx.tenant),
    canManage: isTenantAdmin(ctx.user, ctx.tenant),
    iam: currentIamMode(),
  })),

  setRole: tenantAdminProcedure
    .input(membersSetRoleInput)
    .mutation(({ ctx, input }) =>
      createMembersService({ db: ctx.db }).setRole(
        ctx.user,
        ctx.tenant,
        input.userId,
        input.role,
        ctx.requestId,
      ),
    ),

  invite: tenantAdminProcedure
    .input(membersInviteInput)
    .mutation(({ ctx, input }) =>
      createMembersService({ db: ctx.db }).invite(
        ctx.user,
        ctx.tenant,
        input.username,
        input.role,
        ctx.requestId,
      ),
    ),

  remove: tenantAdminProcedure
    .input(membersRemoveInput)
    .mutation(({ ctx, input }) =>
      createMembersService({ db: ctx.db }).remove(ctx.user, ctx.tenant, input.userId, ctx.requestId),
    ),
});
