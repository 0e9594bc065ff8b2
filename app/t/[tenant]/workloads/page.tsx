import type { Metadata } from "next";
import { Suspense } from "react";
import { PageHeader } from "@/components/ui/page-header";
import { TenantPodTable } from "@/components/workloads/pod-table";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Workloads" };

export default async function WorkloadsPage(props: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await requireTenant((await props.params).tenant);
  prefetch(trpc.workloads.pods.list.queryOptions({ tenant }));
  return (
    <HydrateClient>
      <PageHeader
        title="Workloads"
        description={`Pods of tenant ${tenant}'s control plane, as you may list them. Their nodes are virtual nodes backed by the shared super cluster.`}
      />
      <Suspense fallback={<p role="status">Loading pods…</p>}>
        <TenantPodTable tenant={tenant} />
      </Suspense>
    </HydrateClient>
  );
}
