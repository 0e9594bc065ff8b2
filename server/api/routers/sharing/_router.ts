import {
  createTRPCRouter,
  operatorProcedure,
  protectedProcedure,
  tenantAdminProcedure,
  tenantProcedure,
} from "@/server/api/trpc";
import { auditAs } from "@/server/audit/service";
import { isTenantAdmin } from "@/server/core/roles";
import { specHash } from "@/server/sharing/grants";
import { createSharingService, specChanges } from "@/server/sharing/service";
import { sharingKind } from "@/server/sharing/types";
import { createGrantUsageRepository } from "@/server/sharing/usage-repository";
import {
  createGrantSchema,
  grantByNameSchema,
  grantOfTenantSchema,
  grantUsageSchema,
  operatorListSchema,
  updateGrantSchema,
} from "./sharing.schema";

/**
 * Only the owner's admins (and operators) change its grants. Its members and viewers read them;
 * anyone else, grantees included, never gets this far, so a grant cannot be used to make more grants.
 */
const changeGrants = tenantAdminProcedure("change or review its grants");

const operatorRouter = createTRPCRouter({
  /** Every grant in the super cluster, optionally one owner's or in one state. */
  list: operatorProcedure
    .input(operatorListSchema)
    .query(({ input }) => createSharingService().listAll({ owner: input.owner, state: input.state })),

  /** Approves the grant as it is now; refused with the violations if it breaks the policy now. */
  approve: operatorProcedure.input(grantByNameSchema).mutation(async ({ ctx, input }) => {
    const { grant, changed, spec } = await createSharingService().approve(ctx.user, input.name);
    if (changed) {
      await auditAs(ctx)({
        action: "share.approve",
        tenant: grant.owner,
        targetKind: sharingKind,
        target: grant.name,
        detail: { approvedSpec: specHash(spec), spec },
      });
    }
    return grant;
  }),

  revoke: operatorProcedure.input(grantByNameSchema).mutation(async ({ ctx, input }) => {
    const { grant, changed } = await createSharingService().revoke(ctx.user, input.name);
    if (changed) {
      await auditAs(ctx)({
        tenant: grant.owner,
        action: "share.revoke",
        targetKind: sharingKind,
        target: grant.name,
        detail: {},
      });
    }
    return grant;
  }),
});

export const sharingRouter = createTRPCRouter({
  /** The owner's grants; `canChange` says whether the caller may create, edit and revoke. */
  list: tenantProcedure.query(async ({ ctx }) => ({
    grants: await createSharingService().listOwned(ctx.tenant),
    canChange: isTenantAdmin(ctx.user, ctx.tenant),
  })),

  get: tenantProcedure.input(grantOfTenantSchema).query(async ({ ctx, input }) => ({
    grant: await createSharingService().getOwned(ctx.tenant, input.name),
    canChange: isTenantAdmin(ctx.user, ctx.tenant),
  })),

  /** Creates `<tenant>.<name>`; refused with the rules it breaks; active at once unless approval is required. */
  create: changeGrants.input(createGrantSchema).mutation(async ({ ctx, input }) => {
    const { tenant: _tenant, name, ...body } = input;
    const { grant, spec } = await createSharingService().create(ctx.user, ctx.tenant, name, body);
    await auditAs(ctx)({
      action: "share.create",
      tenant: ctx.tenant,
      targetKind: sharingKind,
      target: grant.name,
      detail: { spec, state: grant.state },
    });
    return grant;
  }),

  /** Replaces the grant's grantees, rules, expiry and purpose (approval again when required). */
  update: changeGrants.input(updateGrantSchema).mutation(async ({ ctx, input }) => {
    const { tenant: _tenant, name, resourceVersion, ...body } = input;
    const { grant, before, after } = await createSharingService().update(
      ctx.user,
      ctx.tenant,
      name,
      body,
      resourceVersion,
    );
    await auditAs(ctx)({
      action: "share.update",
      tenant: ctx.tenant,
      targetKind: sharingKind,
      target: grant.name,
      detail: { changes: specChanges(before, after), state: grant.state },
    });
    return grant;
  }),

  /** Ends the grant at once everywhere; it stays listed as Revoked. */
  revoke: changeGrants.input(grantOfTenantSchema).mutation(async ({ ctx, input }) => {
    const { grant, changed } = await createSharingService().revoke(ctx.user, input.name, ctx.tenant);
    if (changed)
      await auditAs(ctx)({
        tenant: ctx.tenant,
        action: "share.revoke",
        targetKind: sharingKind,
        target: grant.name,
        detail: {},
      });
    return grant;
  }),

  delete: changeGrants.input(grantOfTenantSchema).mutation(async ({ ctx, input }) => {
    const removed = await createSharingService().remove(ctx.tenant, input.name);
    if (removed.deleted) {
      await auditAs(ctx)({
        action: "share.delete",
        tenant: ctx.tenant,
        targetKind: sharingKind,
        target: removed.name,
        detail: { spec: removed.spec },
      });
    }
    return { name: removed.name, deleted: removed.deleted };
  }),

  /**
   * Who used the grant, when, for what and how (newest first, paginated), and the grant's own
   * history. Admins only: it names the grantee users, as the audit log does.
   */
  usage: changeGrants.input(grantUsageSchema).query(async ({ ctx, input }) => {
    const name = input.name.startsWith(`${ctx.tenant}.`) ? input.name : `${ctx.tenant}.${input.name}`;
    const repository = createGrantUsageRepository(ctx.db);
    const [page, changes] = await Promise.all([
      repository.uses(ctx.tenant, name, { cursor: input.cursor, limit: input.limit }),
      input.cursor ? Promise.resolve([]) : repository.changes(ctx.tenant, name),
    ]);
    return { ...page, changes };
  }),

  /** The operator policy in force, as the caller may read it (lists of tenants for operators only). */
  policy: protectedProcedure.query(({ ctx }) => createSharingService().policySeenBy(ctx.user)),

  operator: operatorRouter,
});
