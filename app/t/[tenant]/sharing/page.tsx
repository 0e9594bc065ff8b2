import type { Metadata } from "next";
import { Suspense } from "react";
import { OwnerGrants } from "@/components/sharing/owner-grants";
import { SharingPolicy } from "@/components/sharing/sharing-policy";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Sharing" };

export default async function SharingPage(props: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await requireTenant((await props.params).tenant);
  prefetch(trpc.sharing.list.queryOptions({ tenant }));
  prefetch(trpc.sharing.policy.queryOptions());
  return (
    <HydrateClient>
      <PageHeader
        title="Sharing"
        description={`What tenant ${tenant} shares with other tenants: exact verbs on exact resources in named namespaces, until the grant expires or is revoked. Every use is audited.`}
      />
      <Suspense fallback={<p role="status">Loading grants…</p>}>
        <OwnerGrants tenant={tenant} />
      </Suspense>
      <Suspense fallback={<p role="status">Loading the operator policy…</p>}>
        <SharingPolicy heading="What the operators allow" />
      </Suspense>
    </HydrateClient>
  );
}
