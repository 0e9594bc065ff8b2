import type { Context } from "@/server/api/trpc";
import { createTRPCRouter, operatorProcedure, tenantProcedure } from "@/server/api/trpc";
import { recordAudit } from "@/server/audit/service";
import { formatHard } from "@/server/core/quota-resources";
import type { SessionUser } from "@/server/core/roles";
import { InvalidInputError } from "@/server/errors";
import { desiredHard, invalidQuotaMessage } from "./quota-change";
import {
  createTemplateSchema,
  previewQuotaSchema,
  quotaOfTenantSchema,
  setDefaultTemplateSchema,
  setQuotaSchema,
  templateByNameSchema,
  updateTemplateSchema,
} from "./quotas.schema";
import { createQuotaTemplateRepository } from "./template-repository";
import {
  assertTemplateUnused,
  clearTenantQuota,
  previewTenantQuota,
  setTenantQuota,
  tenantQuota,
  tenantsByTemplate,
} from "./tenant-quota";

type Actor = Pick<Context, "requestId"> & { user: SessionUser };

function audit(
  ctx: Actor,
  event: { action: string; tenant?: string; targetKind: string; target: string; detail?: object },
) {
  return recordAudit({
    actorId: ctx.user.id,
    actorName: ctx.user.name,
    actorTenant: ctx.user.tenant,
    tenant: event.tenant ?? null,
    action: event.action,
    targetKind: event.targetKind,
    target: event.target,
    result: "success",
    requestId: ctx.requestId,
    detail: (event.detail as Record<string, unknown> | undefined) ?? null,
  });
}

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
    await audit(ctx, {
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
    await audit(ctx, {
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
    await audit(ctx, {
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
    await audit(ctx, {
      action: "quota.template.set-default",
      targetKind: "QuotaTemplate",
      target: input.name ?? previous ?? "",
      detail: { from: previous, to: input.name },
    });
    return { name: input.name, previous };
  }),
});

export const quotasRouter = createTRPCRouter({
  /** A tenant's quota with its usage: operators, and the tenant's members. */
  get: tenantProcedure.query(({ ctx }) => tenantQuota(ctx.tenant)),

  /**
   * Sets a tenant's quota from a template, explicit limits, or a template with explicit limits over
   * it. All or nothing; limits below current usage need allowBelowUsage (then `warnings` lists them).
   */
  set: operatorProcedure.input(setQuotaSchema).mutation(async ({ ctx, input }) => {
    const change = await setTenantQuota(input, createQuotaTemplateRepository(ctx.db));
    await audit(ctx, {
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
    await audit(ctx, {
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
});
