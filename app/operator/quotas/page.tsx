import type { Metadata } from "next";
import { Suspense } from "react";
import { QuotaOverview } from "@/components/quotas/quota-overview";
import { QuotaTemplates } from "@/components/quotas/quota-templates";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Quotas" };

export default async function QuotasPage() {
  await requireOperator();
  prefetch(trpc.quotas.usage.overview.queryOptions());
  prefetch(trpc.quotas.templates.list.queryOptions());
  return (
    <HydrateClient>
      <PageHeader
        title="Quotas"
        description="Tenant quotas across the super cluster: what tenants were given against what exists, who uses most, and the templates quotas are set from."
      />
      <Suspense fallback={<p role="status">Loading the quota overview…</p>}>
        <QuotaOverview />
      </Suspense>
      <Suspense fallback={<p role="status">Loading templates…</p>}>
        <QuotaTemplates />
      </Suspense>
    </HydrateClient>
  );
}
