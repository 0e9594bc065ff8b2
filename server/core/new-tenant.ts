/**
 * What a new Tenant may be: its name, versions, provisioners and first admins. Zod only, so the
 * create dialog, the CLI and the procedure validate with the same rules before anything is sent.
 */
import { z } from "zod";
import { newAccountFields } from "@/server/core/account-fields";

/** Kubernetes versions a new tenant control plane may run. */
export const supportedVersions = ["1.36"] as const;
export const provisioners = ["local", "kubernetes"] as const;
/** Names Ring0 or Kubernetes already mean something by. */
export const reservedTenantNames = ["system", "kube-system", "default", "ring0"] as const;

// 40 characters at most, so names derived from the tenant's (namespaces, services) stay valid.
export const tenantName = z
  .string()
  .min(3, "expected at least 3 characters")
  .max(40, "expected at most 40 characters")
  .regex(
    /^[a-z]([-a-z0-9]*[a-z0-9])?$/,
    "expected a DNS-1123 label starting with a letter (lowercase letters, digits and '-', ending with a letter or digit)",
  )
  .refine((name) => !(reservedTenantNames as readonly string[]).includes(name), {
    message: `is reserved (${reservedTenantNames.join(", ")})`,
  });

export const adminName = z
  .string()
  .regex(/^[a-z0-9][-a-z0-9.@]{0,62}$/, "expected a username (lowercase letters, digits, '-', '.', '@')");

export const createTenantSchema = z.object({
  name: tenantName,
  displayName: z.string().trim().min(1, "expected a display name").max(80, "expected at most 80 characters"),
  provisioner: z.enum(provisioners).default("local"),
  version: z.enum(supportedVersions, { message: `expected one of ${supportedVersions.join(", ")}` }),
  admins: z.array(adminName).max(20, "expected at most 20 admins").default([]),
  /** Embedded IAM only: an account made right after the Tenant, as its tenant admin. */
  firstAdmin: z.object(newAccountFields).optional(),
});
export type CreateTenantSchema = z.input<typeof createTenantSchema>;
