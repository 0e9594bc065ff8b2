import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Suspense } from "react";
import { SuperPodDetail } from "@/components/super-pods/super-pod-detail";
import { PageHeader } from "@/components/ui/page-header";
import { superPodInput } from "@/server/api/routers/super-pods/super-pods.schema";
import { getQueryClient, HydrateClient, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

type Props = { params: Promise<{ namespace: string; pod: string }> };

export async function generateMetadata(props: Props): Promise<Metadata> {
  return { title: `Pod ${decodeURIComponent((await props.params).pod)}` };
}

export default async function SuperPodPage(props: Props) {
  await requireOperator();
  const params = await props.params;
  const input = { namespace: decodeURIComponent(params.namespace), name: decodeURIComponent(params.pod) };
  if (!superPodInput.safeParse(input).success) notFound();
  // Awaited (not just prefetched) so a pod that is not in the super cluster is a 404 page.
  try {
    await getQueryClient().fetchQuery(trpc.superPods.get.queryOptions(input));
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === "NOT_FOUND") notFound();
    throw error;
  }
  return (
    <HydrateClient>
      <p>
        <Link href="/operator/pods">← Pods</Link>
      </p>
      <PageHeader
        title={`Pod ${input.name}`}
        description={`Namespace ${input.namespace} of the super cluster`}
      />
      <Suspense fallback={<p role="status">Loading pod…</p>}>
        <SuperPodDetail namespace={input.namespace} name={input.name} />
      </Suspense>
    </HydrateClient>
  );
}
