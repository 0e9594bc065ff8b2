"use client";

import { useSuspenseQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";

/** The tenants whose synced pods are bound to a super node, with how many. */
export function TenantsOnNode({ name }: { name: string }) {
  const trpc = useTRPC();
  const { data: tenants } = useSuspenseQuery({
    ...trpc.syncer.tenantsOnNode.queryOptions({ name }),
    refetchInterval: 5_000,
  });
  return (
    <section aria-labelledby="tenants-on-node-heading">
      <h2 id="tenants-on-node-heading" style={{ marginTop: "1.5rem" }}>
        Tenants on this node
      </h2>
      {tenants.length === 0 ? (
        <EmptyState title="No tenant pods on this node">
          <p>No pod synced from a tenant control plane is bound here.</p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Tenants on this node">
          <thead>
            <tr>
              <th scope="col">Tenant</th>
              <th scope="col">Pods</th>
            </tr>
          </thead>
          <tbody>
            {tenants.map((tenant) => (
              <tr key={tenant.tenant}>
                <td>
                  <Link href={`/operator/tenants/${encodeURIComponent(tenant.tenant)}`}>{tenant.tenant}</Link>
                </td>
                <td>{tenant.pods}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
