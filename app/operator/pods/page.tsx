import type { Metadata } from "next";
import { Suspense } from "react";
import { filterFromSearch } from "@/components/super-pods/pod-filter";
import { SuperPodTable } from "@/components/super-pods/super-pod-table";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Pods" };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

export default async function SuperPodsPage(props: Props) {
  await requireOperator();
  const initialFilter = filterFromSearch(await props.searchParams);
  prefetch(trpc.superPods.list.queryOptions());
  return (
    <HydrateClient>
      <PageHeader
        title="Pods"
        description="Every pod of the super cluster: tenants' pods as the syncer placed them, and the cluster's own. Open one for its logs and a shell."
      />
      <Suspense fallback={<p role="status">Loading pods…</p>}>
        <SuperPodTable initialFilter={initialFilter} />
      </Suspense>
    </HydrateClient>
  );
}
