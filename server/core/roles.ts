/**
 * Ring0's roles and the named checks every layer uses (tRPC tiers, pages, streams). Keep
 * authorization decisions here, never as ad-hoc `if`s in handlers.
 */
export const ring0Roles = ["operator", "tenant-admin", "tenant-member", "tenant-viewer"] as const;
export type Ring0Role = (typeof ring0Roles)[number];

/** Roles a tenant admin can give; operators come from the IAM only. */
export const assignableRoles = ["tenant-admin", "tenant-member", "tenant-viewer"] as const;

export interface SessionUser {
  /** Ring0's user id (database). */
  id: string;
  /** The IAM's subject. */
  subject: string;
  name: string;
  email: string | null;
  /** The tenant the IAM says the user belongs to. */
  tenant: string;
  role: Ring0Role;
}

/** Strongest role first: a user the IAM gives several roles gets the strongest it may hold. */
const precedence: Ring0Role[] = ["operator", "tenant-admin", "tenant-member", "tenant-viewer"];

/**
 * Maps the IAM's tenant and role claims to one Ring0 role. Only users of the operator tenant can
 * be operators; anyone else claiming it is a tenant admin at most. No role claim means viewer.
 */
export function roleFromClaims(tenant: string, claimedRoles: unknown, operatorTenant: string): Ring0Role {
  const claimed = normaliseRoles(claimedRoles);
  for (const role of precedence) {
    if (!claimed.has(role)) continue;
    if (role === "operator" && tenant !== operatorTenant) continue;
    return role;
  }
  return tenant === operatorTenant && claimed.has("operator") ? "operator" : "tenant-viewer";
}

function normaliseRoles(value: unknown): Set<string> {
  if (typeof value === "string") return new Set(value.split(/[\s,]+/).filter(Boolean));
  if (Array.isArray(value)) return new Set(value.filter((role): role is string => typeof role === "string"));
  return new Set();
}

export function isOperator(user: Pick<SessionUser, "role">): boolean {
  return user.role === "operator";
}

/** Operators reach every tenant; everyone else only the tenant they belong to. */
export function canAccessTenant(user: Pick<SessionUser, "role" | "tenant">, tenant: string): boolean {
  return isOperator(user) || user.tenant === tenant;
}

/** Which audit events a user may read: operators all, tenant admins their tenant's, others none. */
export function auditScope(
  user: Pick<SessionUser, "role" | "tenant">,
): { all: true } | { tenant: string } | null {
  if (isOperator(user)) return { all: true };
  if (user.role === "tenant-admin") return { tenant: user.tenant };
  return null;
}

export function canReadAudit(user: Pick<SessionUser, "role" | "tenant">, tenant?: string): boolean {
  const scope = auditScope(user);
  if (!scope) return false;
  if ("all" in scope) return true;
  return tenant === undefined || tenant === scope.tenant;
}

export function isTenantAdmin(user: Pick<SessionUser, "role" | "tenant">, tenant: string): boolean {
  return isOperator(user) || (user.role === "tenant-admin" && user.tenant === tenant);
}

/** Where a user lands after signing in. */
export function homePath(user: Pick<SessionUser, "role" | "tenant">): string {
  return isOperator(user) ? "/operator" : `/t/${encodeURIComponent(user.tenant)}`;
}
