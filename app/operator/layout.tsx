import type { ReactNode } from "react";
import { AppShell } from "@/components/shell/app-shell";
import { requireOperator } from "@/server/auth/page-access";

export const dynamic = "force-dynamic";

/** The operator console exists only for operators; for anyone else it is not found. */
export default async function OperatorLayout({ children }: { children: ReactNode }) {
  const user = await requireOperator();
  return (
    <AppShell
      user={user}
      context="Operator console"
      navLabel="Operator console"
      nav={[
        { href: "/operator", label: "Overview", exact: true },
        { href: "/operator/nodes", label: "Nodes" },
        { href: "/operator/pods", label: "Pods" },
        { href: "/operator/tenants", label: "Tenants" },
        { href: "/operator/quotas", label: "Quotas" },
        { href: "/operator/sharing", label: "Sharing" },
        { href: "/operator/syncer", label: "Syncer" },
        { href: "/operator/audit", label: "Audit log" },
      ]}
    >
      {children}
    </AppShell>
  );
}
