import {
  createTRPCRouter,
  operatorProcedure,
  tenantAdminProcedure,
  tenantProcedure,
} from "@/server/api/trpc";
import { auditAs } from "@/server/audit/service";
import { formatHard } from "@/server/core/quota-resources";
import { InvalidInputError } from "@/server/errors";
import { createDefaultShareRepository } from "@/server/quotas/default-share-repository";
import { defaultShareView, setDefaultShare } from "@/server/quotas/default-share-service";
import { desiredHard, invalidQuotaMessage } from "@/server/quotas/quota-change";
import { createQuotaTemplateRepository } from "@/server/quotas/templates-repository";
import {
  assertTemplateUnused,
  clearTenantQuota,
  previewTenantQuota,
  setTenantQuota,
  tenantQuota,
  tenantsByTemplate,
} from "@/server/quotas/tenant-quota";
import { createQuotaUsageRepository } from "@/server/quotas/usage-repository";
import { quotaHistory, quotaOverview, tenantQuotaUsage } from "@/server/quotas/usage-service";
import { setDefaultShareSchema } from "./defaults.schema";
import {
  createTemplateSchema,
  previewQuotaSchema,
  quotaOfTenantSchema,
  setDefaultTemplateSchema,
  setQuotaSchema,
  templateByNameSchema,
  updateTemplateSchema,
} from "./quotas.schema";
import { historyInput, refusalsInput, tenantUsageInput } from "./usage.schema";

/** A template's limits validated (every bad entry at once) and written canonically. */
function checkedTemplateHard(hard: Record<string, unknown>): Record<string, string> {
  const desired = desiredHard(null, hard);
  if (!desired.ok) throw new InvalidInputError(invalidQuotaMessage(desired.errors));
  return formatHard(desired.hard);
}

const templatesRouter = createTRPCRouter({
  /** Every template, with the tenants whose quota was copied from it. */
  list: operatorProcedure.query(async ({ ctx }) => {
    const [templates, users] = await Promise.all([
      createQuotaTemplateRepository(ctx.db).list(),
      tenantsByTemplate(),
    ]);
    return templates.map((template) => ({ ...template, tenants: users.get(template.name) ?? [] }));
  }),

  create: operatorProcedure.input(createTemplateSchema).mutation(async ({ ctx, input }) => {
    const hard = checkedTemplateHard(input.hard);
    const created = await createQuotaTemplateRepository(ctx.db).create({
      ...input,
      hard,
      updatedBy: ctx.user.name,
    });
    await auditAs(ctx)({
      action: "quota.template.create",
      targetKind: "QuotaTemplate",
      target: input.name,
      detail: { hard, isDefault: input.isDefault, description: input.description },
    });
    return created;
  }),

  /** Changes a template; tenants keep the limits they copied until their quota is set again. */
  update: operatorProcedure.input(updateTemplateSchema).mutation(async ({ ctx, input }) => {
    const hard = input.hard ? checkedTemplateHard(input.hard) : undefined;
    const { before, after } = await createQuotaTemplateRepository(ctx.db).update(input.name, {
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(hard ? { hard } : {}),
      updatedBy: ctx.user.name,
    });
    await auditAs(ctx)({
      action: "quota.template.update",
      targetKind: "QuotaTemplate",
      target: input.name,
      detail: {
        before: { hard: before.hard, description: before.description },
        after: { hard: after.hard, description: after.description },
      },
    });
    return after;
  }),

  /** Refused while a tenant's quota names the template. */
  delete: operatorProcedure.input(templateByNameSchema).mutation(async ({ ctx, input }) => {
    await assertTemplateUnused(input.name);
    const deleted = await createQuotaTemplateRepository(ctx.db).delete(input.name);
    await auditAs(ctx)({
      action: "quota.template.delete",
      targetKind: "QuotaTemplate",
      target: input.name,
      detail: { hard: deleted.hard, isDefault: deleted.isDefault },
    });
    return { name: input.name };
  }),

  /** The template new tenants start with (null: none). At most one is the default. */
  setDefault: operatorProcedure.input(setDefaultTemplateSchema).mutation(async ({ ctx, input }) => {
    const previous = await createQuotaTemplateRepository(ctx.db).setDefault(input.name, ctx.user.name);
    await auditAs(ctx)({
      action: "quota.template.set-default",
      targetKind: "QuotaTemplate",
      target: input.name ?? previous ?? "",
      detail: { from: previous, to: input.name },
    });
    return { name: input.name, previous };
  }),
});

/**
 * The read side of tenant quotas: usage against limits (exact, as kubectl prints it), history,
 * refusals, and the operator's allocation overview.
 */
const usageRouter = createTRPCRouter({
  /** Members of the tenant and operators: limits, usage, and the namespace and workload breakdowns. */
  tenant: tenantProcedure.input(tenantUsageInput).query(({ ctx, input }) => tenantQuotaUsage(ctx, input)),
  /** One resource's sampled usage and limit, at most 500 points. */
  history: tenantProcedure.input(historyInput).query(({ ctx, input }) => quotaHistory(ctx, input)),
  /** "Why was this refused": the webhook's refusals, newest first. */
  refusals: tenantProcedure
    .input(refusalsInput)
    .query(({ ctx, input }) => createQuotaUsageRepository(ctx.db).refusals(input.tenant, input)),
  /** Operators: allocation vs super-cluster capacity, overcommit, top consumers. */
  overview: operatorProcedure.query(({ ctx }) => quotaOverview(ctx)),
});

/** The tenant's admins (and operators) choose its default share. */
const chooseDefaultShare = tenantAdminProcedure("choose its default namespace share");

/** The quota each new namespace of a tenant gets. */
const defaultsRouter = createTRPCRouter({
  /** The default share (hard null: none): the tenant's members and operators. */
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
      await auditAs(ctx)({
        tenant: ctx.tenant,
        action: "tenant.quota.default-share.set",
        targetKind: "Tenant",
        target: ctx.tenant,
        detail: { before: change.before, after: change.after },
      });
    }
    return change.view;
  }),
});

/** Tenant quotas: each tenant's limits and their templates, its usage, and its default share. */
export const quotasRouter = createTRPCRouter({
  /** A tenant's quota with its usage: operators, and the tenant's members. */
  get: tenantProcedure.query(({ ctx }) => tenantQuota(ctx.tenant)),

  /**
   * Sets a tenant's quota from a template, explicit limits, or a template with explicit limits over
   * it. All or nothing; limits below current usage need allowBelowUsage (then `warnings` lists them).
   */
  set: operatorProcedure.input(setQuotaSchema).mutation(async ({ ctx, input }) => {
    const change = await setTenantQuota(input, createQuotaTemplateRepository(ctx.db));
    await auditAs(ctx)({
      action: "tenant.quota.set",
      tenant: input.tenant,
      targetKind: "Tenant",
      target: input.tenant,
      detail: {
        before: change.before,
        after: change.after,
        allowBelowUsage: input.allowBelowUsage,
        used: change.used,
        over: change.over,
      },
    });
    return {
      tenant: input.tenant,
      hard: change.after.hard ?? {},
      template: change.after.template ?? null,
      used: change.used,
      over: change.over,
      warnings: change.warnings,
    };
  }),

  /** Removes the tenant's quota: nothing limits it any more. */
  clear: operatorProcedure.input(quotaOfTenantSchema).mutation(async ({ ctx, input }) => {
    const before = await clearTenantQuota(input.tenant);
    // Clearing a tenant without a quota changes nothing, so there is nothing to record.
    if (before === null) return { tenant: input.tenant, cleared: false };
    await auditAs(ctx)({
      action: "tenant.quota.clear",
      tenant: input.tenant,
      targetKind: "Tenant",
      target: input.tenant,
      detail: { before },
    });
    return { tenant: input.tenant, cleared: true };
  }),

  /** What a new quota would mean before it is applied: the resources, namespaces and workloads over. */
  preview: operatorProcedure
    .input(previewQuotaSchema)
    .query(({ input }) => previewTenantQuota(input.tenant, input.hard)),

  templates: templatesRouter,
  usage: usageRouter,
  defaults: defaultsRouter,
});
