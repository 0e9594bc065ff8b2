import { notFound, redirect } from "next/navigation";
import type { ReactNode } from "react";
import { AppShell } from "@/components/shell/app-shell";
import { canReadAudit } from "@/server/auth/roles";
import { currentUser } from "@/server/auth/server-session";
import { tenantForUser } from "@/server/tenants/access";

export const dynamic = "force-dynamic";

/**
 * A tenant's portal. The tenant is resolved through the same membership check as the tRPC
 * tier; anyone outside it gets the not-found page, so no data of that tenant is rendered.
 */
export default async function TenantLayout(props: {
  children: ReactNode;
  params: Promise<{ tenant: string }>;
}) {
  const { tenant: requested } = await props.params;
  const user = await currentUser();
  if (!user) redirect(`/signin?callbackUrl=/t/${encodeURIComponent(requested)}`);
  const tenant = await tenantForUser(user, requested);
  if (!tenant) notFound();
  const nav = [
    { href: `/t/${tenant}`, label: "Overview", exact: true },
    { href: `/t/${tenant}/members`, label: "Members" },
    ...(canReadAudit(user, tenant) ? [{ href: `/t/${tenant}/audit`, label: "Audit log" }] : []),
  ];
  return (
    <AppShell user={user} context={`Tenant ${tenant}`} navLabel="Tenant portal" nav={nav}>
      {props.children}
    </AppShell>
  );
}
