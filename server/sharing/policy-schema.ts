/**
 * The operators' sharing policy as configured (RING0_SHARING_POLICY): its schema, defaults and
 * parser, and the grant verbs it names. A leaf (zod only), so configuration (server/env.ts) can
 * validate the policy without importing the sharing domain; policy.ts applies it to grants.
 */
import { z } from "zod";

/** The verbs a grant may name ("*": every verb). */
export const grantVerbs = [
  "get",
  "list",
  "watch",
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
  "*",
] as const;
export type GrantVerb = (typeof grantVerbs)[number];

export const sharingPolicySchema = z
  .object({
    /** Tenants that may grant ("*": every tenant). */
    grantors: z.array(z.string().min(1)).default(["*"]),
    /** Tenants that may receive ("*": every tenant). */
    grantees: z.array(z.string().min(1)).default(["*"]),
    /** Grants stay PendingApproval until an operator approves them (again after every edit). */
    requireApproval: z.boolean().default(false),
    /** Longest a grant may last; grants must then carry an expiry. null: no limit, no expiry needed. */
    maxExpiryDays: z.number().int().min(1).max(3650).nullable().default(90),
    /** "*" in API groups, resources or verbs. */
    allowWildcards: z.boolean().default(false),
    /** Resources (`secrets`, `pods/exec`) no grant may name. */
    deniedResources: z.array(z.string().min(1)).default(["secrets"]),
    /** API groups no grant may name ("" is the core group). */
    deniedApiGroups: z.array(z.string()).default([]),
    /**
     * Creating or changing workloads (pods and what makes pods). Off by default: a pod runs with any
     * Secret and service account of its namespace, so such a grant would share those too.
     */
    allowWorkloadWrites: z.boolean().default(false),
    /** Verbs a grant may name ("*" in a grant is `allowWildcards`' to allow, not a verb here). */
    allowedVerbs: z
      .array(
        z.enum(
          grantVerbs.filter((verb) => verb !== "*"),
          {
            error: `expected one of ${grantVerbs.filter((verb) => verb !== "*").join(", ")} ("*" is allowWildcards)`,
          },
        ),
      )
      .default(["get", "list", "watch", "create", "update", "patch", "delete"]),
  })
  .strict();

export type SharingPolicyConfig = z.infer<typeof sharingPolicySchema>;

export const defaultSharingPolicy: SharingPolicyConfig = sharingPolicySchema.parse({});

/** Parses RING0_SHARING_POLICY (JSON); throws with every problem named. */
export function parseSharingPolicy(text: string | undefined): SharingPolicyConfig {
  if (!text?.trim()) return defaultSharingPolicy;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`RING0_SHARING_POLICY is not JSON: ${(error as Error).message}`);
  }
  const parsed = sharingPolicySchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      `RING0_SHARING_POLICY: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; ")}`,
    );
  }
  return parsed.data;
}
