import { z } from "zod";
import { tenantInput } from "@/server/api/trpc";
import { type QuotaResource, quotaResourceNames } from "@/server/core/quota-resources";

export const tenantUsageInput = tenantInput.extend({
  /** Which workloads count as the top ones. */
  workloadsBy: z.enum(["cpu", "memory"]).default("cpu"),
  topWorkloads: z.number().int().min(1).max(100).default(10),
});
export type TenantUsageInput = z.infer<typeof tenantUsageInput>;

export const historyInput = tenantInput.extend({
  resource: z.enum(quotaResourceNames as [QuotaResource, ...QuotaResource[]], {
    error: `expected one of ${quotaResourceNames.join(", ")}`,
  }),
  /** Up to 30 days back. */
  sinceHours: z.number().int().min(1).max(720).default(24),
});
export type HistoryInput = z.infer<typeof historyInput>;

export const refusalsInput = tenantInput.extend({
  cursor: z.string().min(1).max(64).optional(),
  limit: z.number().int().min(1).max(100).default(20),
});
export type RefusalsInput = z.infer<typeof refusalsInput>;
