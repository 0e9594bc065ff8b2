import { createTRPCRouter, tenantProcedure } from "@/server/api/trpc";
import { controlPlaneSummary, watchControlPlaneSummary } from "@/server/tenants/control-plane-summary";
import { createNamespace, deleteNamespace, listNamespaces } from "@/server/workloads/namespaces";
import { createNamespaceInput, deleteNamespaceInput } from "./namespaces.schema";

/**
 * A tenant's own control plane, for its members and operators (the tenant tier): its status card
 * and its namespaces, the latter acting as the caller inside the control plane.
 */
export const controlPlaneRouter = createTRPCRouter({
  summary: tenantProcedure.query(({ ctx }) => controlPlaneSummary(ctx.tenant)),

  /** The summary again whenever the tenant's Tenant object changes (SSE). */
  watchSummary: tenantProcedure.subscription(({ ctx, signal }) =>
    watchControlPlaneSummary(ctx.tenant, signal),
  ),

  namespaces: createTRPCRouter({
    list: tenantProcedure.query(({ ctx }) =>
      listNamespaces({ user: ctx.user, tenant: ctx.tenant, requestId: ctx.requestId }),
    ),
    create: tenantProcedure
      .input(createNamespaceInput)
      .mutation(({ ctx, input }) =>
        createNamespace({ user: ctx.user, tenant: ctx.tenant, requestId: ctx.requestId }, input.name),
      ),
    delete: tenantProcedure
      .input(deleteNamespaceInput)
      .mutation(({ ctx, input }) =>
        deleteNamespace({ user: ctx.user, tenant: ctx.tenant, requestId: ctx.requestId }, input.name),
      ),
  }),
});
