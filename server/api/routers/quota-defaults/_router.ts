import { createTRPCRouter, tenantAdminProcedure, tenantProcedure } from "@/server/api/trpc";
import { recordAudit } from "@/server/audit/service";
import { createDefaultShareRepository } from "@/server/quotas/default-share-repository";
import { defaultShareView, setDefaultShare } from "./default-share";
import { setDefaultShareSchema } from "./quota-defaults.schema";

/** The tenant's admins (and operators) choose its default share. */
const chooseDefaultShare = tenantAdminProcedure("choose its default namespace share");

export const quotaDefaultsRouter = createTRPCRouter({
  /** The quota each new namespace of the tenant gets (hard null: none): the tenant's members and operators. */
  get: tenantProcedure.query(async ({ ctx }) =>
    defaultShareView(ctx.tenant, await createDefaultShareRepository(ctx.db).find(ctx.tenant)),
  ),

  /**
   * Sets the default share new namespaces get as their `default-share` ResourceQuota (null clears
   * it). Each limit must be a namespace-level resource at most the tenant quota's limit.
   */
  set: chooseDefaultShare.input(setDefaultShareSchema).mutation(async ({ ctx, input }) => {
    const change = await setDefaultShare(createDefaultShareRepository(ctx.db), {
      tenant: ctx.tenant,
      hard: input.hard,
      actor: ctx.user.name,
    });
    // Clearing a tenant without a default share changes nothing, so there is nothing to record.
    if (change.before !== null || change.after !== null) {
      await recordAudit({
        actorId: ctx.user.id,
        actorName: ctx.user.name,
        actorTenant: ctx.user.tenant,
        tenant: ctx.tenant,
        action: "tenant.quota.default-share.set",
        targetKind: "Tenant",
        target: ctx.tenant,
        result: "success",
        requestId: ctx.requestId,
        detail: { before: change.before, after: change.after },
      });
    }
    return change.view;
  }),
});
