import type { Metadata } from "next";
import { Suspense } from "react";
import { SuperClusterCard } from "@/components/operator/super-cluster-card";
import { TenantTable } from "@/components/operator/tenant-table";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Operator console" };

export default async function OperatorOverview() {
  await requireOperator();
  prefetch(trpc.tenants.list.queryOptions());
  prefetch(trpc.nodes.overview.queryOptions());
  return (
    <HydrateClient>
      <PageHeader title="Fleet overview" description="The super cluster, and every tenant Ring0 knows of." />
      <Suspense fallback={<p role="status">Loading super cluster…</p>}>
        <SuperClusterCard />
      </Suspense>
      <h2>Tenants</h2>
      <Suspense fallback={<p role="status">Loading tenants…</p>}>
        <TenantTable />
      </Suspense>
    </HydrateClient>
  );
}
