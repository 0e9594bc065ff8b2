import type { Metadata } from "next";
import { MemberTable } from "@/components/tenant/member-table";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";

export const metadata: Metadata = { title: "Members" };

export default async function MembersPage(props: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await props.params;
  prefetch(trpc.tenants.members.queryOptions({ tenant }));
  return (
    <HydrateClient>
      <PageHeader title="Members" description={`People with access to tenant ${tenant}, and their roles.`} />
      <MemberTable tenant={tenant} />
    </HydrateClient>
  );
}
