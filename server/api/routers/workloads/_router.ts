import { TRPCError } from "@trpc/server";
import { createTRPCRouter, requireGrant, tenantOrGranteeProcedure } from "@/server/api/trpc";
import { podAttributes, revokeWhenUngranted } from "@/server/sharing/access";
import { watchPods } from "@/server/workloads/pod-feed";
import { getPod, listPods } from "@/server/workloads/pods";
import { tenantPodUsage } from "@/server/workloads/usage";
import { getPodInput, listPodsInput } from "./workloads.schema";

/**
 * The tenant's pods, read as the caller inside its control plane (its RBAC decides). Users of other
 * tenants read them where a live sharing grant covers the namespace (one namespace a call: no grant
 * covers a list across namespaces), as their grantee identity; a live view ends with FORBIDDEN the
 * moment the grant stops covering it.
 */
export const workloadsRouter = createTRPCRouter({
  pods: createTRPCRouter({
    list: tenantOrGranteeProcedure.input(listPodsInput).query(async ({ ctx, input }) => {
      await requireGrant(ctx, podAttributes("list", input.namespace ?? ""));
      return listPods({ user: ctx.user, tenant: ctx.tenant }, input.namespace);
    }),
    /** The list, then again after each change (SSE; a list-and-watch as the user, coalesced). */
    watch: tenantOrGranteeProcedure.input(listPodsInput).subscription(async function* ({
      ctx,
      input,
      signal,
    }) {
      await requireGrant(ctx, podAttributes("watch", input.namespace ?? ""));
      if (!ctx.grantee) {
        yield* watchPods({ user: ctx.user, tenant: ctx.tenant }, input.namespace, signal);
        return;
      }
      const ended = new AbortController();
      const end = () => ended.abort();
      signal?.addEventListener("abort", end, { once: true });
      let revoked = false;
      const stop = revokeWhenUngranted(
        ctx.user,
        ctx.tenant,
        podAttributes("watch", input.namespace ?? ""),
        () => {
          revoked = true;
          ended.abort();
        },
      );
      try {
        yield* watchPods({ user: ctx.user, tenant: ctx.tenant }, input.namespace, ended.signal);
      } finally {
        stop();
        signal?.removeEventListener("abort", end);
      }
      if (revoked) {
        throw new TRPCError({
          code: "FORBIDDEN",
          message: `Access to tenant "${ctx.tenant}" was revoked or has expired.`,
        });
      }
    }),
    /** CPU and memory in use by the pods the caller may list (as `kubectl top pods`). */
    usage: tenantOrGranteeProcedure.input(listPodsInput).query(async ({ ctx, input }) => {
      await requireGrant(ctx, podAttributes("list", input.namespace ?? ""));
      return tenantPodUsage({ user: ctx.user, tenant: ctx.tenant }, input.namespace);
    }),
    get: tenantOrGranteeProcedure.input(getPodInput).query(async ({ ctx, input }) => {
      await requireGrant(ctx, podAttributes("get", input.namespace, input.name));
      return getPod({ user: ctx.user, tenant: ctx.tenant }, input.namespace, input.name);
    }),
  }),
});
