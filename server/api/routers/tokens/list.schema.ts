import { z } from "zod";
import { tenantNamePattern } from "@/server/auth/roles";

export const tokensListInput = z
  .object({ tenant: z.string().regex(tenantNamePattern, "expected a tenant name").optional() })
  .default({});
export type TokensListInput = z.infer<typeof tokensListInput>;
