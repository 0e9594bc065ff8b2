import type { Metadata } from "next";
import { AuditLog } from "@/components/audit/audit-log";
import { auditPageSize, auditPagination } from "@/components/audit/audit-query";
import { ExecSessions } from "@/components/audit/exec-sessions";
import { PageHeader } from "@/components/ui/page-header";
import { HydrateClient, prefetch, trpc } from "@/server/api/rsc";
import { requireOperator } from "@/server/auth/page-access";

export const metadata: Metadata = { title: "Audit log" };

export default async function OperatorAuditPage() {
  await requireOperator();
  prefetch(trpc.audit.list.infiniteQueryOptions({ limit: auditPageSize }, auditPagination));
  prefetch(trpc.audit.execSessions.infiniteQueryOptions({ limit: auditPageSize }, auditPagination));
  return (
    <HydrateClient>
      <PageHeader title="Audit log" description="Every tenant's sign-ins, sign-outs and changes." />
      <AuditLog showTenant />
      <ExecSessions showTenant />
    </HydrateClient>
  );
}
