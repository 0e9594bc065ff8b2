import type { Metadata } from "next";
import { Suspense } from "react";
import { SharedGrantList } from "@/components/shared/shared-grant-list";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Shared with me" };

export default async function SharedWithMePage(props: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await requireTenant((await props.params).tenant);
  prefetch(trpc.sharedWithMe.list.queryOptions());
  return (
    <HydrateClient>
      <PageHeader
        title="Shared with me"
        description="Namespaces other tenants share with you (or with your tenant): for what, until when, and what you may do in them."
      />
      <Suspense fallback={<p role="status">Loading what is shared with you…</p>}>
        <SharedGrantList tenant={tenant} />
      </Suspense>
    </HydrateClient>
  );
}
