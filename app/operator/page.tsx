import type { Metadata } from "next";
import { Suspense } from "react";
import { TenantTable } from "@/components/operator/tenant-table";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Operator console" };

export default async function OperatorOverview() {
  await requireOperator();
  prefetch(trpc.tenants.list.queryOptions());
  return (
    <HydrateClient>
      <PageHeader title="Fleet overview" description="Every tenant Ring0 knows of and who uses it." />
      <Suspense fallback={<p role="status">Loading tenants…</p>}>
        <TenantTable />
      </Suspense>
    </HydrateClient>
  );
}
