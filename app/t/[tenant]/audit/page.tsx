import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { AuditLog } from "@/components/audit/audit-log";
import { auditPageSize, auditPagination } from "@/components/audit/audit-query";
import { ExecSessions } from "@/components/audit/exec-sessions";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireTenant } from "@/server/auth/page-access";
import { canReadAudit } from "@/server/core/roles";

export const metadata: Metadata = { title: "Audit log" };

export default async function TenantAuditPage(props: { params: Promise<{ tenant: string }> }) {
  const { user, tenant } = await requireTenant((await props.params).tenant);
  if (!canReadAudit(user, tenant)) notFound();
  prefetch(trpc.audit.list.infiniteQueryOptions({ tenant, limit: auditPageSize }, auditPagination));
  prefetch(trpc.audit.execSessions.infiniteQueryOptions({ tenant, limit: auditPageSize }, auditPagination));
  return (
    <HydrateClient>
      <PageHeader title="Audit log" description={`Sign-ins, sign-outs and changes in tenant ${tenant}.`} />
      <AuditLog tenant={tenant} showTenant={false} />
      <ExecSessions tenant={tenant} showTenant={false} />
    </HydrateClient>
  );
}
