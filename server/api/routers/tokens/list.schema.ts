import { z } from "zod";
import { tenantNameField } from "@/server/core/tenant-name";

export const tokensListInput = z
  .object({ tenant: tenantNameField("expected a tenant name").optional() })
  .default({});
export type TokensListInput = z.infer<typeof tokensListInput>;
