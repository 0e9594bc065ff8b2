import { createTRPCRouter, tenantProcedure } from "@/server/api/trpc";
import { watchPods } from "./pod-feed";
import { getPod, listPods } from "./pods";
import { getPodInput, listPodsInput } from "./workloads.schema";

/** The tenant's pods, read as the caller inside its control plane (its RBAC decides). */
export const workloadsRouter = createTRPCRouter({
  pods: createTRPCRouter({
    list: tenantProcedure
      .input(listPodsInput)
      .query(({ ctx, input }) => listPods({ user: ctx.user, tenant: ctx.tenant }, input.namespace)),
    /** The list, then again after each change (SSE; a list-and-watch as the user, coalesced). */
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
