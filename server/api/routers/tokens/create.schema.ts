import { z } from "zod";
import { tenantNameField } from "@/server/core/tenant-name";
import { maxTokenLifetimeDays } from "@/server/tokens/policy";

export const tokensCreateInput = z.object({
  tenant: tenantNameField(),
  name: z.string().trim().min(1, "expected a name").max(64, "expected at most 64 characters"),
  expiresInDays: z
    .number()
    .int("expected a whole number of days")
    .min(1, "expected at least 1 day")
    .max(maxTokenLifetimeDays, `expected at most ${maxTokenLifetimeDays} days`)
    .default(30),
});
export type TokensCreateInput = z.infer<typeof tokensCreateInput>;
