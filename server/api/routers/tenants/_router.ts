import { createTRPCRouter, operatorProcedure, tenantProcedure } from "@/server/api/trpc";
import { isTenantAdmin } from "@/server/core/roles";
import { createTenant, deleteTenant, suspendTenant, upgradeTenant } from "@/server/tenants/service";
import { getTenantDetail, watchTenantDetail } from "@/server/tenants/tenant-detail";
import { listTenantResources, tenantVersions, watchTenantResources } from "@/server/tenants/tenant-resources";
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

  /** A new Tenant (and its first admin's account, whose one-time password is in this answer only). */
  create: operatorProcedure.input(createTenantSchema).mutation(({ ctx, input }) => createTenant(ctx, input)),

  /** Deleting a tenant takes its control plane and workloads with it: the name must be typed. */
  delete: operatorProcedure
    .input(deleteTenantSchema)
    .mutation(({ ctx, input }) => deleteTenant(ctx, input.name)),

  /** Operators: one Tenant with its status, conditions and Events (the tenant page). */
  get: operatorProcedure.input(tenantByNameSchema).query(({ input }) => getTenantDetail(input.name)),

  /** One Tenant, again after every change of it or its Events (SSE); null once it is gone. */
  watch: operatorProcedure
    .input(tenantByNameSchema)
    .subscription(({ input, signal }) => watchTenantDetail(input.name, signal)),

  /** Kubernetes versions a tenant control plane can run here (Ring0 has binaries for them). */
  versions: operatorProcedure.query(() => tenantVersions()),

  /** Suspend stops the tenant's control plane (data kept); resume starts it again. */
  setSuspended: operatorProcedure
    .input(setSuspendedSchema)
    .mutation(({ ctx, input }) => suspendTenant(ctx, input.name, input.suspend)),

  /** Moves the control plane to another available Kubernetes version. */
  upgrade: operatorProcedure
    .input(upgradeTenantSchema)
    .mutation(({ ctx, input }) => upgradeTenant(ctx, input.name, input.version)),
});
