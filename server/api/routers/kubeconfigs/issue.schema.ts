import { z } from "zod";
import { maxTokenLifetimeDays } from "@/server/tokens/policy";

/** The tenant comes from tenantProcedure's input; this adds the token's lifetime and name. */
export const kubeconfigsIssueInput = z.object({
  expiresInDays: z
    .number({ error: "expected a number of days" })
    .int("expected a whole number of days")
    .min(1, "expected at least 1 day")
    .max(maxTokenLifetimeDays, `expected at most ${maxTokenLifetimeDays} days`)
    .default(30),
  name: z.string().trim().min(1, "expected a name").max(64, "expected at most 64 characters").optional(),
});
export type KubeconfigsIssueInput = z.infer<typeof kubeconfigsIssueInput>;
