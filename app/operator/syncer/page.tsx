import type { Metadata } from "next";
import { Suspense } from "react";
import { SyncerHealthTable } from "@/components/syncer/syncer-health";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Syncer" };

export default async function SyncerPage() {
  await requireOperator();
  prefetch(trpc.syncer.health.queryOptions());
  return (
    <HydrateClient>
      <PageHeader
        title="Syncer"
        description="Per tenant: the fair queue in front of the syncer's workers and the patroller's counts, on this replica."
      />
      <Suspense fallback={<p role="status">Loading syncer health…</p>}>
        <SyncerHealthTable />
      </Suspense>
    </HydrateClient>
  );
}
