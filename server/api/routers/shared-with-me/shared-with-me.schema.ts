/** Inputs of the grantee's procedures. Zod only, so pages can validate with the same rules. */

import { z } from "zod";
import { tenantNameField } from "@/server/core/tenant-name";
import { maxTokenLifetimeDays } from "@/server/tokens/policy";

export const ownerTenant = tenantNameField();

export const sharedKubeconfigInput = z.object({
  owner: ownerTenant,
  /** The token's lifetime; never beyond the grants' own expiry. */
  expiresInDays: z
    .number({ error: "expected a number of days" })
    .int("expected a whole number of days")
    .min(1, "expected at least 1 day")
    .max(maxTokenLifetimeDays, `expected at most ${maxTokenLifetimeDays} days`)
    .default(7),
});
export type SharedKubeconfigInput = z.infer<typeof sharedKubeconfigInput>;
