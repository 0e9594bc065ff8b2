import { createTRPCRouter, operatorProcedure, tenantProcedure } from "@/server/api/trpc";
import { quotaHistory } from "./history.handler";
import { quotaOverview } from "./overview.handler";
import { createQuotaUsageRepository } from "./repository";
import { historyInput, refusalsInput, tenantUsageInput } from "./schema";
import { tenantQuotaUsage } from "./tenant.handler";

/**
 * The read side of tenant quotas: usage against limits (exact, as kubectl prints it), history,
 * refusals, and the operator's allocation overview. Changes go through the `quotas` router.
 */
export const quotaUsageRouter = createTRPCRouter({
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
