import type { Metadata } from "next";
import { Suspense } from "react";
import { MemberTable } from "@/components/tenant/member-table";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Members" };

export default async function MembersPage(props: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await requireTenant((await props.params).tenant);
  prefetch(trpc.tenants.members.queryOptions({ tenant }));
  return (
    <HydrateClient>
      <PageHeader title="Members" description={`People with access to tenant ${tenant}, and their roles.`} />
      <Suspense fallback={<p role="status">Loading members…</p>}>
        <MemberTable tenant={tenant} />
      </Suspense>
    </HydrateClient>
  );
}
