import type { Metadata } from "next";
import { TenantTable } from "@/components/operator/tenant-table";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";

export const metadata: Metadata = { title: "Operator console" };

export default function OperatorOverview() {
  prefetch(trpc.tenants.list.queryOptions());
  return (
    <HydrateClient>
      <PageHeader title="Fleet overview" description="Every tenant Ring0 knows of and who uses it." />
      <TenantTable />
    </HydrateClient>
  );
}
