import { createTRPCRouter, tenantProcedure } from "@/server/api/trpc";
import { issueKubeconfig } from "./issue.handler";
import { kubeconfigsIssueInput } from "./issue.schema";

export const kubeconfigsRouter = createTRPCRouter({
  /** Members of the tenant and operators (the CLI's `ring0 kubeconfig <tenant>`). */
  issue: tenantProcedure
    .input(kubeconfigsIssueInput)
    .mutation(({ ctx, input }) => issueKubeconfig(ctx, input)),
});
