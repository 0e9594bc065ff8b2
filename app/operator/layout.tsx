import { notFound, redirect } from "next/navigation";
import type { ReactNode } from "react";
import { AppShell } from "@/components/shell/app-shell";
import { isOperator } from "@/server/auth/roles";
import { currentUser } from "@/server/auth/server-session";

export const dynamic = "force-dynamic";

/** The operator console exists only for operators; for anyone else it is not found. */
export default async function OperatorLayout({ children }: { children: ReactNode }) {
  const user = await currentUser();
  if (!user) redirect("/signin?callbackUrl=/operator");
  if (!isOperator(user)) notFound();
  return (
    <AppShell
      user={user}
      context="Operator console"
      navLabel="Operator console"
      nav={[
        { href: "/operator", label: "Overview", exact: true },
        { href: "/operator/audit", label: "Audit log" },
      ]}
    >
      {children}
    </AppShell>
  );
}
