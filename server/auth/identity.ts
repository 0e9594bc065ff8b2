import { type Ring0Role, roleFromClaims } from "@/server/core/roles";
import { tenantNamePattern } from "@/server/core/tenant-name";

export interface ClaimSettings {
  tenantClaim: string;
  rolesClaim: string;
  operatorTenant: string;
}

export interface IamIdentity {
  subject: string;
  tenant: string;
  name: string;
  email: string | null;
  role: Ring0Role;
}

export type IdentityResult = { ok: true; identity: IamIdentity } | { ok: false; reason: string };

/** Reads a claim by name, or by a dotted path for IAMs that nest them (`ext.tenant`). */
export function readClaim(claims: Record<string, unknown>, name: string): unknown {
  if (name in claims) return claims[name];
  let value: unknown = claims;
  for (const part of name.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * Turns an IAM's ID-token/userinfo claims into a Ring0 identity, or says why it cannot: a
 * user without a valid tenant claim is refused rather than guessed into some tenant.
 */
export function identityFromClaims(claims: Record<string, unknown>, settings: ClaimSettings): IdentityResult {
  const subject = claims.sub;
  if (typeof subject !== "string" || subject.length === 0) {
    return { ok: false, reason: "the IAM sent no subject (sub) claim" };
  }
  const tenant = readClaim(claims, settings.tenantClaim);
  if (typeof tenant !== "string" || !tenantNamePattern.test(tenant)) {
    return {
      ok: false,
      reason: `the IAM sent no valid "${settings.tenantClaim}" claim (expected a lowercase tenant name)`,
    };
  }
  const name =
    stringClaim(claims.name) ??
    stringClaim(claims.preferred_username) ??
    stringClaim(claims.email) ??
    subject;
  return {
    ok: true,
    identity: {
      subject,
      tenant,
      name: name.slice(0, 200),
      email: stringClaim(claims.email) ?? null,
      role: roleFromClaims(tenant, readClaim(claims, settings.rolesClaim), settings.operatorTenant),
    },
  };
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}
