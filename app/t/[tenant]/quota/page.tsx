import type { Metadata } from "next";
import { DefaultShare } from "@/components/quotas/default-share";
import { refusalPageSize, refusalPagination } from "@/components/quotas/refusal-query";
import { TenantQuota } from "@/components/quotas/tenant-quota";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Quota" };

export default async function QuotaPage(props: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await requireTenant((await props.params).tenant);
  prefetch(trpc.quotas.usage.tenant.queryOptions({ tenant, workloadsBy: "cpu" }));
  prefetch(
    trpc.quotas.usage.refusals.infiniteQueryOptions({ tenant, limit: refusalPageSize }, refusalPagination),
  );
  return (
    <HydrateClient>
      <PageHeader
        title="Quota"
        description={`What tenant ${tenant} may use across all its namespaces, what it uses, and why requests were refused.`}
      />
      <TenantQuota tenant={tenant} />
      <DefaultShare tenant={tenant} />
    </HydrateClient>
  );
}
