import type { Metadata } from "next";
import { TenantOverview } from "@/components/tenant/tenant-overview";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";

export const metadata: Metadata = { title: "Tenant overview" };

export default async function TenantPage(props: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await props.params;
  prefetch(trpc.tenants.overview.queryOptions({ tenant }));
  return (
    <HydrateClient>
      <TenantOverview tenant={tenant} />
    </HydrateClient>
  );
}
