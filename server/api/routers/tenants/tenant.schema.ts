/**
 * Input schemas of the single-tenant procedures (the tenant page). Zod only, so the page's forms
 * validate with the same rules before they send.
 */
import { z } from "zod";

// Looser than the create rule: a tenant made with kubectl under other rules still has a page.
export const existingTenantName = z
  .string({ error: "expected a tenant name" })
  .min(1, "expected a tenant name")
  .max(63, "expected at most 63 characters")
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    "expected a tenant name (lowercase letters, digits and '-', starting and ending with a letter or digit)",
  );

export const tenantByNameSchema = z.object({ name: existingTenantName });

export const setSuspendedSchema = z.object({
  name: existingTenantName,
  suspend: z.boolean({ error: "expected suspend to be true or false" }),
});

export const upgradeTenantSchema = z.object({
  name: existingTenantName,
  // Which versions exist is the server's to say (the binaries it has); the handler checks that.
  version: z
    .string({ error: "expected a Kubernetes version, e.g. 1.36.4" })
    .trim()
    .min(1, "expected a Kubernetes version, e.g. 1.36.4")
    .max(32, "expected at most 32 characters"),
});
