import { createQuotaTemplateRepository } from "@/server/api/routers/quotas/template-repository";
import { createTRPCRouter, operatorProcedure, tenantProcedure } from "@/server/api/trpc";
import { recordAudit } from "@/server/audit/service";
import { isTenantAdmin } from "@/server/core/roles";
import { getDb } from "@/server/db/client";
import { NotFoundError } from "@/server/errors";
import { createAccountService } from "@/server/iam/account-service";
import { getTenantDetail, watchTenantDetail } from "@/server/tenants/tenant-detail";
import {
  createTenantResource,
  deleteTenantResource,
  listTenantResources,
  setTenantSuspended,
  setTenantVersion,
  tenantVersions,
  watchTenantResources,
} from "@/server/tenants/tenant-resources";
import { createUserRepository } from "@/server/users/repository";
import { createTenantSchema, deleteTenantSchema } from "./resources.schema";
import { setSuspendedSchema, tenantByNameSchema, upgradeTenantSchema } from "./tenant.schema";

export const tenantsRouter = createTRPCRouter({
  /** Operators: every tenant Ring0 knows of, with member counts. */
  list: operatorProcedure.query(({ ctx }) => createUserRepository(ctx.db).tenantSummaries()),

  /** A tenant's portal overview; only its members (and operators) get past the tier. */
  overview: tenantProcedure.query(async ({ ctx }) => {
    const members = await createUserRepository(ctx.db).members(ctx.tenant);
    return {
      tenant: ctx.tenant,
      viewerRole: ctx.user.role,
      isTenantAdmin: isTenantAdmin(ctx.user, ctx.tenant),
      memberCount: members.length,
      adminCount: members.filter((member) => member.role === "tenant-admin").length,
    };
  }),

  members: tenantProcedure.query(({ ctx }) => createUserRepository(ctx.db).members(ctx.tenant)),

  /** Operators: the Tenant custom resources in the super cluster. */
  resources: operatorProcedure.query(() => listTenantResources()),

  /** The Tenant resource list, again after every change (SSE). */
  watchResources: operatorProcedure.subscription(({ signal }) => watchTenantResources(signal)),

  create: operatorProcedure.input(createTenantSchema).mutation(async ({ ctx, input }) => {
    const { firstAdmin, ...resource } = input;
    const accounts = createAccountService({ db: ctx.db });
    // An account that cannot be made (external IAM, taken username) is refused before the Tenant exists.
    if (firstAdmin) accounts.assertCanCreate(firstAdmin.username);
    // A new tenant starts with the default quota template's limits, if an operator chose one. (Test
    // callers of this procedure may come without a database in the context, as recordAudit allows.)
    const template = await createQuotaTemplateRepository(ctx.db ?? getDb()).findDefault();
    const quota = template ? { hard: template.hard, template: template.name } : undefined;
    const tenant = await createTenantResource({ ...resource, quota }, { name: ctx.user.name });
    await recordAudit({
      actorId: ctx.user.id,
      actorName: ctx.user.name,
      actorTenant: ctx.user.tenant,
      tenant: input.name,
      action: "tenant.create",
      targetKind: "Tenant",
      target: input.name,
      result: "success",
      requestId: ctx.requestId,
      detail: {
        version: input.version,
        provisioner: input.provisioner,
        admins: input.admins,
        quota: quota ?? null,
      },
    });
    if (!firstAdmin) return { ...tenant, firstAdmin: null };
    // The one-time password is in this answer only (the dialog shows it once).
    const created = await accounts.create(
      ctx.user,
      input.name,
      { ...firstAdmin, role: "tenant-admin" },
      ctx.requestId,
    );
    return {
      ...tenant,
      firstAdmin: { username: created.account.username, temporaryPassword: created.temporaryPassword },
    };
  }),

  /** Deleting a tenant takes its control plane and workloads with it: the name must be typed. */
  delete: operatorProcedure.input(deleteTenantSchema).mutation(async ({ ctx, input }) => {
    if (!(await deleteTenantResource(input.name))) {
      throw new NotFoundError(`Tenant "${input.name}" was not found in the super cluster.`);
    }
    await recordAudit({
      actorId: ctx.user.id,
      actorName: ctx.user.name,
      actorTenant: ctx.user.tenant,
      tenant: input.name,
      action: "tenant.delete",
      targetKind: "Tenant",
      target: input.name,
      result: "success",
      requestId: ctx.requestId,
    });
    return { name: input.name };
  }),

  /** Operators: one Tenant with its status, conditions and Events (the tenant page). */
  get: operatorProcedure.input(tenantByNameSchema).query(({ input }) => getTenantDetail(input.name)),

  /** One Tenant, again after every change of it or its Events (SSE); null once it is gone. */
  watch: operatorProcedure
    .input(tenantByNameSchema)
    .subscription(({ input, signal }) => watchTenantDetail(input.name, signal)),

  /** Kubernetes versions a tenant control plane can run here (Ring0 has binaries for them). */
  versions: operatorProcedure.query(() => tenantVersions()),

  /** Suspend stops the tenant's control plane (data kept); resume starts it again. */
  setSuspended: operatorProcedure.input(setSuspendedSchema).mutation(async ({ ctx, input }) => {
    const { tenant, wasSuspended } = await setTenantSuspended(input.name, input.suspend);
    await recordAudit({
      actorId: ctx.user.id,
      actorName: ctx.user.name,
      actorTenant: ctx.user.tenant,
      tenant: input.name,
      action: input.suspend ? "tenant.suspend" : "tenant.resume",
      targetKind: "Tenant",
      target: input.name,
      result: "success",
      requestId: ctx.requestId,
      detail: { wasSuspended },
    });
    return tenant;
  }),

  /** Moves the control plane to another available Kubernetes version. */
  upgrade: operatorProcedure.input(upgradeTenantSchema).mutation(async ({ ctx, input }) => {
    const { tenant, from } = await setTenantVersion(input.name, input.version);
    await recordAudit({
      actorId: ctx.user.id,
      actorName: ctx.user.name,
      actorTenant: ctx.user.tenant,
      tenant: input.name,
      action: "tenant.upgrade",
      targetKind: "Tenant",
      target: input.name,
      result: "success",
      requestId: ctx.requestId,
      detail: { from, to: tenant.version },
    });
    return tenant;
  }),
});
