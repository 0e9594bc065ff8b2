import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Suspense } from "react";
import { PageHeader } from "@/components/ui/page-header";
import { PodDetail } from "@/components/workloads/pod-detail";
import { getPodInput } from "@/server/api/routers/workloads/workloads.schema";
import { getQueryClient, HydrateClient, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";

type Props = { params: Promise<{ tenant: string; namespace: string; pod: string }> };

export async function generateMetadata(props: Props): Promise<Metadata> {
  return { title: `Pod ${decodeURIComponent((await props.params).pod)}` };
}

export default async function PodPage(props: Props) {
  const params = await props.params;
  const { tenant } = await requireTenant(params.tenant);
  const input = {
    tenant,
    namespace: decodeURIComponent(params.namespace),
    name: decodeURIComponent(params.pod),
  };
  if (!getPodInput.safeParse(input).success) notFound();
  // Awaited (not just prefetched) so a pod that does not exist, or is not the user's to see, is not found.
  try {
    await getQueryClient().fetchQuery(trpc.workloads.pods.get.queryOptions(input));
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === "NOT_FOUND") notFound();
    throw error;
  }
  return (
    <HydrateClient>
      <p>
        <Link href={`/t/${tenant}/workloads`}>← Workloads</Link>
      </p>
      <PageHeader
        title={`Pod ${input.name}`}
        description={`Namespace ${input.namespace} of tenant ${tenant}`}
      />
      <Suspense fallback={<p role="status">Loading pod…</p>}>
        <PodDetail tenant={tenant} namespace={input.namespace} name={input.name} />
      </Suspense>
    </HydrateClient>
  );
}
