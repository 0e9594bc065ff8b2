import type { Metadata } from "next";
import { Suspense } from "react";
import { TenantOverview } from "@/components/tenant/tenant-overview";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Tenant overview" };

export default async function TenantPage(props: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await requireTenant((await props.params).tenant);
  prefetch(trpc.tenants.overview.queryOptions({ tenant }));
  prefetch(trpc.controlPlane.summary.queryOptions({ tenant }));
  return (
    <HydrateClient>
      <Suspense fallback={<p role="status">Loading tenant…</p>}>
        <TenantOverview tenant={tenant} />
      </Suspense>
    </HydrateClient>
  );
}
