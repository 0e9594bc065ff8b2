import type { Metadata } from "next";
import { Suspense } from "react";
import { NamespaceManager } from "@/components/tenant/namespace-manager";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Namespaces" };

export default async function NamespacesPage(props: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await requireTenant((await props.params).tenant);
  prefetch(trpc.controlPlane.namespaces.list.queryOptions({ tenant }));
  return (
    <HydrateClient>
      <PageHeader
        title="Namespaces"
        description={`Namespaces of tenant ${tenant}'s control plane. You act as yourself: the control plane's RBAC decides what you may change.`}
      />
      <Suspense fallback={<p role="status">Loading namespaces…</p>}>
        <NamespaceManager tenant={tenant} />
      </Suspense>
    </HydrateClient>
  );
}
