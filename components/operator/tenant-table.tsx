"use client";

import { useSuspenseQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";

export function TenantTable() {
  const trpc = useTRPC();
  const tenants = useSuspenseQuery(trpc.tenants.list.queryOptions());
  if (tenants.data.length === 0) {
    return (
      <EmptyState title="No tenants yet">
        <p>Tenants appear here as soon as their users sign in.</p>
      </EmptyState>
    );
  }
  return (
    <table className="data" aria-label="Tenants">
      <thead>
        <tr>
          <th scope="col">Tenant</th>
          <th scope="col">Members</th>
          <th scope="col">Admins</th>
          <th scope="col">Last sign-in (UTC)</th>
        </tr>
      </thead>
      <tbody>
        {tenants.data.map((tenant) => (
          <tr key={tenant.tenant}>
            <td>
              <Link href={`/t/${tenant.tenant}`}>{tenant.tenant}</Link>
            </td>
            <td>{tenant.members}</td>
            <td>{tenant.admins}</td>
            <td>
              {tenant.lastLoginAt ? tenant.lastLoginAt.toISOString().replace("T", " ").slice(0, 19) : "—"}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
