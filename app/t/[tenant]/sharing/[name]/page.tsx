import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Suspense } from "react";
import { GrantDetail } from "@/components/sharing/grant-detail";
import { PageHeader } from "@/components/ui/page-header";
import { grantOfTenantSchema } from "@/server/api/routers/sharing/sharing.schema";
import { getQueryClient, HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Grant" };

export default async function GrantPage(props: { params: Promise<{ tenant: string; name: string }> }) {
  const params = await props.params;
  const { tenant } = await requireTenant(params.tenant);
  const name = decodeURIComponent(params.name);
  if (!grantOfTenantSchema.safeParse({ tenant, name }).success) notFound();
  // Awaited (not just prefetched) so a grant that does not exist, or is not this tenant's, is not found.
  try {
    await getQueryClient().fetchQuery(trpc.sharing.get.queryOptions({ tenant, name }));
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === "NOT_FOUND") notFound();
    throw error;
  }
  prefetch(trpc.sharing.policy.queryOptions());
  return (
    <HydrateClient>
      <p>
        <Link href={`/t/${tenant}/sharing`}>← Sharing</Link>
      </p>
      <PageHeader title={`Grant ${name}`} description={`A grant of tenant ${tenant} to other tenants.`} />
      <Suspense fallback={<p role="status">Loading the grant…</p>}>
        <GrantDetail tenant={tenant} name={name} />
      </Suspense>
    </HydrateClient>
  );
}
