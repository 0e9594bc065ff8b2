/** Input schemas for the Tenant resource procedures; what a new Tenant may be is server/core/new-tenant.ts. */
import { z } from "zod";

export { createTenantSchema } from "@/server/core/new-tenant";

export const deleteTenantSchema = z
  // Looser than tenantName: a tenant made with kubectl under other rules can still be deleted.
  .object({
    name: z
      .string()
      .min(1, "expected a tenant name")
      .max(63, "expected at most 63 characters")
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "expected a tenant name"),
    confirm: z.string(),
  })
  .refine((input) => input.confirm === input.name, {
    message: "type the tenant's name to confirm",
    path: ["confirm"],
  });
