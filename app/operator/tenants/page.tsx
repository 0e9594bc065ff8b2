import type { Metadata } from "next";
import { Suspense } from "react";
import { TenantTable } from "@/components/tenants/tenant-table";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Tenants" };

export default async function TenantsPage() {
  await requireOperator();
  prefetch(trpc.tenants.resources.queryOptions());
  return (
    <HydrateClient>
      <PageHeader
        title="Tenants"
        description="Tenant resources in the super cluster: each gets its own Kubernetes control plane."
      />
      <Suspense fallback={<p role="status">Loading tenants…</p>}>
        <TenantTable />
      </Suspense>
    </HydrateClient>
  );
}
