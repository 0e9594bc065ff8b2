import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Suspense } from "react";
import { SharedPodDetail } from "@/components/shared/shared-pod-detail";
import { PageHeader } from "@/components/ui/page-header";
import { getPodInput } from "@/server/api/routers/workloads/workloads.schema";
import { getQueryClient, HydrateClient, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";
import { canExecInPod, namespaceAccess } from "@/server/sharing/grantee-view";
import { grantsOfSharedNamespace } from "@/server/sharing/shared-with-me";

type Props = { params: Promise<{ tenant: string; owner: string; namespace: string; pod: string }> };

export async function generateMetadata(props: Props): Promise<Metadata> {
  return { title: `Pod ${decodeURIComponent((await props.params).pod)}` };
}

/** A pod of a shared namespace: not found unless a live grant of the owner names the namespace. */
export default async function SharedPodPage(props: Props) {
  const params = await props.params;
  const { user, tenant } = await requireTenant(params.tenant);
  const owner = decodeURIComponent(params.owner);
  const input = {
    tenant: owner,
    namespace: decodeURIComponent(params.namespace),
    name: decodeURIComponent(params.pod),
  };
  if (!getPodInput.safeParse(input).success) notFound();
  const grants = await grantsOfSharedNamespace(user, owner, input.namespace);
  if (!grants) notFound();
  // Awaited so a pod the grants do not reach (or that does not exist) is not found.
  try {
    await getQueryClient().fetchQuery(trpc.workloads.pods.get.queryOptions(input));
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "NOT_FOUND" || code === "FORBIDDEN") notFound();
    throw error;
  }
  const access = namespaceAccess(grants, input.namespace);
  const canReadLogs =
    access.canReadLogs && (access.logsLimitedTo === null || access.logsLimitedTo.includes(input.name));
  const canExec = canExecInPod(grants, input.namespace, input.name);
  const back = `/t/${tenant}/shared/${encodeURIComponent(owner)}/${encodeURIComponent(input.namespace)}`;
  return (
    <HydrateClient>
      <p>
        <Link href={back}>← Workloads in {input.namespace}</Link>
      </p>
      <PageHeader
        title={`Pod ${input.name}`}
        description={`Namespace ${input.namespace}, shared with you by tenant ${owner}`}
      />
      <Suspense fallback={<p role="status">Loading pod…</p>}>
        <SharedPodDetail
          owner={owner}
          namespace={input.namespace}
          name={input.name}
          canReadLogs={canReadLogs}
          canExec={canExec}
        />
      </Suspense>
    </HydrateClient>
  );
}
