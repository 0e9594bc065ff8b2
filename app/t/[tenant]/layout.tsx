import type { ReactNode } from "react";
import { AppShell } from "@/components/shell/app-shell";
import { requireTenant } from "@/server/auth/page-access";
import { canReadAudit } from "@/server/core/roles";

export const dynamic = "force-dynamic";

/**
 * A tenant's portal. The tenant is resolved through the same membership check as the tRPC
 * tier; anyone outside it gets the not-found page, so no data of that tenant is rendered.
 */
export default async function TenantLayout(props: {
  children: ReactNode;
  params: Promise<{ tenant: string }>;
}) {
  const { user, tenant } = await requireTenant((await props.params).tenant);
  const nav = [
    { href: `/t/${tenant}`, label: "Overview", exact: true },
    { href: `/t/${tenant}/namespaces`, label: "Namespaces" },
    { href: `/t/${tenant}/workloads`, label: "Workloads" },
    { href: `/t/${tenant}/quota`, label: "Quota" },
    { href: `/t/${tenant}/sharing`, label: "Sharing" },
    { href: `/t/${tenant}/shared`, label: "Shared with me" },
    { href: `/t/${tenant}/members`, label: "Members" },
    { href: `/t/${tenant}/tokens`, label: "API tokens" },
    ...(canReadAudit(user, tenant) ? [{ href: `/t/${tenant}/audit`, label: "Audit log" }] : []),
  ];
  return (
    <AppShell user={user} context={`Tenant ${tenant}`} navLabel="Tenant portal" nav={nav}>
      {props.children}
    </AppShell>
  );
}
