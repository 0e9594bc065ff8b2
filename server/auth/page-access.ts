import "server-only";
import { notFound, redirect } from "next/navigation";
import { cache } from "react";
import { currentUser } from "@/server/auth/server-session";
import { isOperator, type SessionUser } from "@/server/core/roles";
import { tenantForUser } from "@/server/tenants/access";

/**
 * Access checks for pages. Next renders a layout and its page in parallel, so each page checks
 * before it prefetches anything; `cache` makes the layout's and the page's check one query.
 */
export const requireUser = cache(async (returnTo: string): Promise<SessionUser> => {
  const user = await currentUser();
  if (!user) redirect(`/signin?callbackUrl=${encodeURIComponent(returnTo)}`);
  return user;
});

/** The operator console is not found for anyone but operators. */
export const requireOperator = cache(async (): Promise<SessionUser> => {
  const user = await requireUser("/operator");
  if (!isOperator(user)) notFound();
  return user;
});

/** A tenant's portal is not found for anyone outside that tenant (operators excepted). */
export const requireTenant = cache(
  async (requested: string): Promise<{ user: SessionUser; tenant: string }> => {
    const user = await requireUser(`/t/${encodeURIComponent(requested)}`);
    const tenant = await tenantForUser(user, requested);
    if (!tenant) notFound();
    return { user, tenant };
  },
);
