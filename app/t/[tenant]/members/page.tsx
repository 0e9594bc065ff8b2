import type { Metadata } from "next";
import { Suspense } from "react";
import { AccountManager, ExternalIamNotice } from "@/components/tenant/account-manager";
import { MemberTable } from "@/components/tenant/member-table";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";
import { isTenantAdmin } from "@/server/core/roles";
import { currentIamMode } from "@/server/users/members-service";

export const metadata: Metadata = { title: "Members" };

export default async function MembersPage(props: { params: Promise<{ tenant: string }> }) {
  const { user, tenant } = await requireTenant((await props.params).tenant);
  const canManage = isTenantAdmin(user, tenant);
  const iam = currentIamMode();
  prefetch(trpc.members.list.queryOptions({ tenant }));
  if (canManage && iam.kind === "embedded") prefetch(trpc.accounts.list.queryOptions({ tenant }));
  return (
    <HydrateClient>
      <PageHeader title="Members" description={`People with access to tenant ${tenant}, and their roles.`} />
      <Suspense fallback={<p role="status">Loading members…</p>}>
        <MemberTable tenant={tenant} />
      </Suspense>
      {canManage ? (
        iam.kind === "embedded" ? (
          <Suspense fallback={<p role="status">Loading accounts…</p>}>
            <AccountManager tenant={tenant} />
          </Suspense>
        ) : (
          <ExternalIamNotice issuer={iam.issuer} />
        )
      ) : null}
    </HydrateClient>
  );
}
