import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { Suspense } from "react";
import { TenantDetail } from "@/components/tenants/tenant-detail";
import { tenantByNameSchema } from "@/server/api/routers/tenants/tenant.schema";
import { getQueryClient, HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

type Props = { params: Promise<{ name: string }> };

export async function generateMetadata(props: Props): Promise<Metadata> {
  return { title: `Tenant ${decodeURIComponent((await props.params).name)}` };
}

export default async function TenantPage(props: Props) {
  await requireOperator();
  const name = decodeURIComponent((await props.params).name);
  if (!tenantByNameSchema.safeParse({ name }).success) notFound();
  // Awaited (not just prefetched) so a tenant that does not exist is the not-found page.
  try {
    await getQueryClient().fetchQuery(trpc.tenants.get.queryOptions({ name }));
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === "NOT_FOUND") notFound();
    throw error;
  }
  prefetch(trpc.tenants.versions.queryOptions());
  prefetch(trpc.syncer.health.queryOptions());
  return (
    <HydrateClient>
      <Suspense fallback={<p role="status">Loading tenant…</p>}>
        <TenantDetail name={name} />
      </Suspense>
    </HydrateClient>
  );
}
