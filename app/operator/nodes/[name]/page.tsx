import type { Metadata } from "next";
import { Suspense } from "react";
import { NodeDetail } from "@/components/nodes/node-detail";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Node" };

export default async function NodePage(props: { params: Promise<{ name: string }> }) {
  await requireOperator();
  const { name } = await props.params;
  prefetch(trpc.nodes.get.queryOptions({ name: decodeURIComponent(name) }));
  prefetch(trpc.syncer.tenantsOnNode.queryOptions({ name: decodeURIComponent(name) }));
  return (
    <HydrateClient>
      <Suspense fallback={<p role="status">Loading node…</p>}>
        <NodeDetail name={decodeURIComponent(name)} />
      </Suspense>
    </HydrateClient>
  );
}
