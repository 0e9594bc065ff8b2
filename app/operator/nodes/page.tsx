import type { Metadata } from "next";
import { Suspense } from "react";
import { NodeTable } from "@/components/nodes/node-table";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Nodes" };

export default async function NodesPage() {
  await requireOperator();
  prefetch(trpc.nodes.list.queryOptions());
  return (
    <HydrateClient>
      <PageHeader
        title="Nodes"
        description="The super cluster's nodes, shared by every tenant's workloads."
      />
      <Suspense fallback={<p role="status">Loading nodes…</p>}>
        <NodeTable />
      </Suspense>
    </HydrateClient>
  );
}
