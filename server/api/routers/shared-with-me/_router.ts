import { createTRPCRouter, protectedProcedure } from "@/server/api/trpc";
import { issueSharedKubeconfig } from "@/server/kubeconfigs/shared";
import { listSharedWithMe } from "@/server/sharing/shared-with-me";
import { sharedKubeconfigInput } from "./shared-with-me.schema";

/** The grantee's side of sharing: what other tenants share with the caller, and kubectl access to it. */
export const sharedWithMeRouter = createTRPCRouter({
  list: protectedProcedure.query(({ ctx }) => listSharedWithMe(ctx.user)),
  /** A kubeconfig with one context `<owner>-shared`; NOT_FOUND without a live grant of `owner`. */
  kubeconfig: protectedProcedure
    .input(sharedKubeconfigInput)
    .mutation(({ ctx, input }) =>
      issueSharedKubeconfig({ user: ctx.user, db: ctx.db, requestId: ctx.requestId }, input),
    ),
});
