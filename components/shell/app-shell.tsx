import Link from "next/link";
import type { ReactNode } from "react";
import { type NavItem, NavLinks } from "@/components/shell/nav-links";
import { ServerStatus } from "@/components/shell/server-status";
import { SignOutButton } from "@/components/shell/sign-out-button";
import { readTheme } from "@/components/ui/theme-server";
import { ThemeToggle } from "@/components/ui/theme-toggle";
import type { SessionUser } from "@/server/core/roles";

const roleLabel: Record<SessionUser["role"], string> = {
  operator: "Operator",
  "tenant-admin": "Tenant admin",
  "tenant-member": "Member",
  "tenant-viewer": "Viewer",
};

/** The console and portal frame: who you are, where you are, navigation, theme, sign-out. */
export async function AppShell(props: {
  user: SessionUser;
  context: string;
  navLabel: string;
  nav: NavItem[];
  children: ReactNode;
}) {
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="shell-header">
        <Link className="brand" href="/">
          Ring<span>0</span>
        </Link>
        <span className="context-badge">{props.context}</span>
        <ServerStatus />
        <span className="header-spacer" />
        <ThemeToggle initial={await readTheme()} />
        <section className="whoami" aria-label="Signed in as">
          <span className="whoami-name">{props.user.name}</span>
          <span className="whoami-meta">
            {roleLabel[props.user.role]} · tenant <strong>{props.user.tenant}</strong>
          </span>
        </section>
        <SignOutButton />
      </header>
      <NavLinks items={props.nav} label={props.navLabel} />
      <main id="main" className="shell-main">
        {props.children}
      </main>
    </div>
  );
}
