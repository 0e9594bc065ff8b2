import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { SharedKubeconfigButton } from "@/components/shared/kubeconfig-button";
import { SharedPodTable } from "@/components/shared/shared-pod-table";
import { PageHeader } from "@/components/ui/page-header";
import { workloadNamespace } from "@/server/api/routers/workloads/workloads.schema";
import { requireTenant } from "@/server/auth/page-access";
import { grantsOfSharedNamespace } from "@/server/sharing/shared-with-me";

type Props = { params: Promise<{ tenant: string; owner: string; namespace: string }> };

export async function generateMetadata(props: Props): Promise<Metadata> {
  const params = await props.params;
  return { title: `Shared: ${decodeURIComponent(params.namespace)}` };
}

/** A shared namespace's pods; not found unless a live grant of the owner names it for the user. */
export default async function SharedNamespacePage(props: Props) {
  const params = await props.params;
  const { user, tenant } = await requireTenant(params.tenant);
  const owner = decodeURIComponent(params.owner);
  const namespace = decodeURIComponent(params.namespace);
  if (!workloadNamespace.safeParse(namespace).success) notFound();
  if (!(await grantsOfSharedNamespace(user, owner, namespace))) notFound();
  return (
    <>
      <p>
        <Link href={`/t/${tenant}/shared`}>← Shared with me</Link>
      </p>
      <PageHeader
        title={`Workloads in ${namespace}`}
        description={`Pods of namespace ${namespace}, shared with you by tenant ${owner}.`}
      />
      <SharedPodTable tenant={tenant} owner={owner} namespace={namespace} />
      <section className="card" aria-label="kubectl access" style={{ marginTop: "1.5rem" }}>
        <h2>kubectl access</h2>
        <SharedKubeconfigButton owner={owner} namespace={namespace} />
      </section>
    </>
  );
}
