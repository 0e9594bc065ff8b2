/**
 * Input schemas of the quota procedures. Zod only (no server imports), so the portal's forms and the
 * CLI check the same shapes before they send. Quantities and resource names are checked by the
 * server (validateHard), which reports every bad entry at once.
 */
import { z } from "zod";
import { existingTenantName } from "@/server/api/routers/tenants/tenant.schema";

/** A quota template's name: a Kubernetes name (DNS-1123 label). */
export const templateName = z
  .string({ error: "expected a template name" })
  .min(1, "expected a template name")
  .max(63, "expected at most 63 characters")
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    "expected a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit)",
  );

/**
 * Resource name → quantity, as `Tenant.spec.quota.hard`. Values stay `unknown` here so that a number
 * or a bad text reaches validateHard and is reported with every other bad entry, not one by one.
 */
export const hardInput = z
  .record(z.string().max(253, "expected a resource name of at most 253 characters"), z.unknown())
  .refine((hard) => Object.keys(hard).length <= 32, "expected at most 32 resources");

export const quotaOfTenantSchema = z.object({ tenant: existingTenantName });

export const setQuotaSchema = z
  .object({
    tenant: existingTenantName,
    hard: hardInput.optional(),
    template: templateName.optional(),
    allowBelowUsage: z.boolean().default(false),
  })
  .refine((input) => input.template !== undefined || Object.keys(input.hard ?? {}).length > 0, {
    message: "give a template, hard limits, or both (to remove the quota, clear it)",
    path: ["hard"],
  });
export type SetQuotaInput = z.input<typeof setQuotaSchema>;

export const previewQuotaSchema = z.object({ tenant: existingTenantName, hard: hardInput });

const description = z.string().trim().max(200, "expected at most 200 characters");

export const createTemplateSchema = z.object({
  name: templateName,
  description: description.default(""),
  hard: hardInput.refine((hard) => Object.keys(hard).length > 0, "expected at least one limit"),
  isDefault: z.boolean().default(false),
});

export const updateTemplateSchema = z.object({
  name: templateName,
  description: description.optional(),
  hard: hardInput.refine((hard) => Object.keys(hard).length > 0, "expected at least one limit").optional(),
});

export const templateByNameSchema = z.object({ name: templateName });

/** null: no template is the default any more. */
export const setDefaultTemplateSchema = z.object({ name: templateName.nullable() });
