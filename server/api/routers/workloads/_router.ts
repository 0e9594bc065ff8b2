import { createTRPCRouter, tenantProcedure } from "@/server/api/trpc";
import { getPod, listPods, watchPods } from "./pods";
import { getPodInput, listPodsInput } from "./workloads.schema";

/** The tenant's pods, read as the caller inside its control plane (its RBAC decides). */
export const workloadsRouter = createTRPCRouter({
  pods: createTRPCRouter({
    list: tenantProcedure
      .input(listPodsInput)
      .query(({ ctx, input }) => listPods({ user: ctx.user, tenant: ctx.tenant }, input.namespace)),
    /** The list again whenever it changes (SSE; re-listed as the user every 2 s). */
    watch: tenantProcedure
      .input(listPodsInput)
      .subscription(({ ctx, input, signal }) =>
        watchPods({ user: ctx.user, tenant: ctx.tenant }, input.namespace, signal),
      ),
    get: tenantProcedure
      .input(getPodInput)
      .query(({ ctx, input }) => getPod({ user: ctx.user, tenant: ctx.tenant }, input.namespace, input.name)),
  }),
});
