/**
 * Input schemas of the sharing procedures. Zod only (no server imports), so the portal's forms and
 * the CLI check the same shapes before they send. Zod checks the shape; what a grant may hold
 * (wildcards, secrets, RBAC, expiry) is the operator policy's, checked by the server so that each
 * refusal names the rule it breaks.
 */
import { z } from "zod";

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const tenantName = z
  .string({ error: "expected a tenant name" })
  .min(1, "expected a tenant name")
  .max(63, "expected at most 63 characters")
  .regex(
    dnsLabel,
    "expected a tenant name (lowercase letters, digits and '-', starting and ending with a letter or digit)",
  );

/** A grant's short name (the object is `<owner>.<name>`). */
export const grantShortName = z
  .string({ error: "expected a grant name" })
  .min(1, "expected a grant name")
  .max(40, "expected a grant name of at most 40 characters")
  .regex(
    dnsLabel,
    "expected a grant name of lowercase letters, digits and '-', starting and ending with a letter or digit",
  );

/** A grant as named by its owner (short) or in full (`<owner>.<name>`, as kubectl shows it). */
export const grantReference = z
  .string({ error: "expected a grant name" })
  .min(1, "expected a grant name")
  .max(253, "expected at most 253 characters")
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "expected a grant name");

const names = (what: string, max: number) =>
  z
    .array(z.string().trim().min(1, `expected ${what}`).max(253, "expected at most 253 characters"))
    .max(max, `expected at most ${max} ${what}s`);

export const granteeInput = z.object({
  tenant: tenantName,
  users: names("user name", 128).optional(),
  groups: names("role group", 8).optional(),
});

const nonEmpty = (what: string, max = 64) => names(what, max).min(1, `name at least one ${what}`);

export const ruleInput = z.object({
  namespaces: nonEmpty("namespace"),
  /** "" is the core API group. */
  apiGroups: z
    .array(z.string().trim().max(253, "expected at most 253 characters"))
    .min(1, 'name at least one API group ("" for the core group)')
    .max(64, "expected at most 64 API groups"),
  resources: nonEmpty("resource"),
  resourceNames: names("resource name", 128).optional(),
  verbs: nonEmpty("verb", 16),
});

export const grantBody = {
  grantees: z.array(granteeInput).min(1, "name at least one grantee").max(32, "expected at most 32 grantees"),
  rules: z.array(ruleInput).min(1, "name at least one rule").max(32, "expected at most 32 rules"),
  /** ISO 8601 with an offset or Z; optional only where the operator policy sets no maximum. */
  expiresAt: z.iso.datetime({ offset: true, error: "expected a date and time (ISO 8601)" }).optional(),
  purpose: z
    .string({ error: "say what the access is for (purpose)" })
    .trim()
    .min(1, "say what the access is for (purpose)")
    .max(1024, "expected a purpose of at most 1024 characters"),
};

export const grantOfTenantSchema = z.object({ tenant: tenantName, name: grantReference });

export const createGrantSchema = z.object({ tenant: tenantName, name: grantShortName, ...grantBody });
export type CreateGrantInput = z.input<typeof createGrantSchema>;

export const updateGrantSchema = z.object({
  tenant: tenantName,
  name: grantReference,
  ...grantBody,
  /** The version the editor read: an edit over someone else's is refused. */
  resourceVersion: z.string().max(64).optional(),
});
export type UpdateGrantInput = z.input<typeof updateGrantSchema>;

export const grantUsageSchema = z.object({
  tenant: tenantName,
  name: grantReference,
  cursor: z.string().max(64).optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export const grantStates = ["Active", "PendingApproval", "Expired", "Revoked"] as const;

export const operatorListSchema = z
  .object({ state: z.enum(grantStates).optional(), owner: tenantName.optional() })
  .default({});

export const grantByNameSchema = z.object({ name: grantReference });
