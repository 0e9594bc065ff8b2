/**
 * Who may issue, see and revoke API tokens. Named checks in the style of server/core/roles.ts;
 * handlers and the service never decide this with ad-hoc conditions.
 */
import { canAccessTenant, isOperator, type SessionUser } from "@/server/core/roles";

type Caller = Pick<SessionUser, "id" | "role" | "tenant">;

/** Which tokens a user may list and revoke. */
export type TokenVisibility = { all: true } | { tenant: string; userId: string } | { userId: string };

/** A user issues tokens only for a tenant they can reach (their own; operators any). */
export function canIssueTokenFor(user: Caller, tenant: string): boolean {
  return canAccessTenant(user, tenant);
}

/** Operators see every token, tenant admins their tenant's and their own, others their own. */
export function tokenVisibility(user: Caller): TokenVisibility {
  if (isOperator(user)) return { all: true };
  if (user.role === "tenant-admin") return { tenant: user.tenant, userId: user.id };
  return { userId: user.id };
}

/** Seeing a token and revoking it go together: whoever may list it may revoke it. */
export function canManageToken(user: Caller, token: { userId: string; tenant: string }): boolean {
  const visibility = tokenVisibility(user);
  if ("all" in visibility) return true;
  if (token.userId === visibility.userId) return true;
  return "tenant" in visibility && token.tenant === visibility.tenant;
}

/** A tenant filter on a list must name a tenant the user can reach, or it reads as not found. */
export function canFilterTokensBy(user: Caller, tenant: string): boolean {
  return canAccessTenant(user, tenant);
}

/** Tokens live at most a year; there are no tokens that never expire. */
export const maxTokenLifetimeDays = 365;

/** Recording a use at most once a minute keeps verification from writing on every request. */
export const lastUsedResolutionMs = 60_000;

export function shouldRecordUse(lastUsedAt: Date | null, now: Date): boolean {
  return lastUsedAt === null || now.getTime() - lastUsedAt.getTime() >= lastUsedResolutionMs;
}
