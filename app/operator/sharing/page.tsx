import type { Metadata } from "next";
import { Suspense } from "react";
import { OperatorGrants } from "@/components/sharing/operator-grants";
import { SharingPolicy } from "@/components/sharing/sharing-policy";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Sharing" };

export default async function OperatorSharingPage() {
  await requireOperator();
  prefetch(trpc.sharing.operator.list.queryOptions({}));
  prefetch(trpc.sharing.policy.queryOptions());
  return (
    <HydrateClient>
      <PageHeader
        title="Sharing"
        description="Every cross-tenant grant in the super cluster: approve the ones waiting, revoke any. The policy below is RING0_SHARING_POLICY."
      />
      <Suspense fallback={<p role="status">Loading grants…</p>}>
        <OperatorGrants />
      </Suspense>
      <Suspense fallback={<p role="status">Loading the policy…</p>}>
        <SharingPolicy heading="Policy in force" />
      </Suspense>
    </HydrateClient>
  );
}
