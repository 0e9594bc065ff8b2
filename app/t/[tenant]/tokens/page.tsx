import type { Metadata } from "next";
import { Suspense } from "react";
import { TokenManager } from "@/components/tokens/token-manager";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "API tokens" };

export default async function TokensPage(props: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await requireTenant((await props.params).tenant);
  prefetch(trpc.tokens.list.queryOptions({ tenant }));
  return (
    <HydrateClient>
      <PageHeader
        title="API tokens"
        description={`Tokens for kubectl and the ring0 CLI against tenant ${tenant}. Each is shown once.`}
      />
      <Suspense fallback={<p role="status">Loading tokens…</p>}>
        <TokenManager tenant={tenant} />
      </Suspense>
    </HydrateClient>
  );
}
