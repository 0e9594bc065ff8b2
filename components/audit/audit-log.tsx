"use client";

import { useSuspenseInfiniteQuery } from "@tanstack/react-query";
import { Suspense, useState, useTransition } from "react";
import { auditDateFormat, auditPageSize, auditPagination } from "@/components/audit/audit-query";
import { useTRPC } from "@/components/trpc/client";
import { DataTable } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import { OlderPages } from "@/components/ui/older-pages";

const actions = [
  { value: "", label: "All actions" },
  { value: "auth.sign-in", label: "Sign-ins" },
  { value: "auth.sign-out", label: "Sign-outs" },
];

/** The audit log: operators see every tenant's events, tenant admins their tenant's. */
export function AuditLog({ tenant, showTenant }: { tenant?: string; showTenant: boolean }) {
  const [action, setAction] = useState("");
  const [filtering, startFiltering] = useTransition();
  return (
    <section aria-label="Audit events" aria-busy={filtering}>
      <div className="toolbar">
        <label className="field">
          Action
          <select value={action} onChange={(event) => startFiltering(() => setAction(event.target.value))}>
            {actions.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Suspense fallback={<p role="status">Loading audit events…</p>}>
        <AuditTable tenant={tenant} action={action} showTenant={showTenant} />
      </Suspense>
    </section>
  );
}

function AuditTable({
  tenant,
  action,
  showTenant,
}: {
  tenant?: string;
  action: string;
  showTenant: boolean;
}) {
  const trpc = useTRPC();
  const query = useSuspenseInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions(
      { tenant, limit: auditPageSize, ...(action ? { action } : {}) },
      auditPagination,
    ),
  );
  const events = query.data.pages.flatMap((page) => page.events);
  type AuditEvent = (typeof events)[number];
  if (events.length === 0) {
    return (
      <EmptyState title="No audit events yet">
        <p>Sign-ins, sign-outs and every change made through Ring0 appear here.</p>
      </EmptyState>
    );
  }
  return (
    <>
      <DataTable
        label="Audit log"
        rows={events}
        rowKey={(event) => event.id}
        columns={[
          {
            header: "When (UTC)",
            cell: (event) => (
              <time dateTime={event.at.toISOString()}>{auditDateFormat.format(event.at)}</time>
            ),
          },
          {
            header: "Who",
            cell: (event) => (
              <>
                {event.actorName}
                {event.actorTenant ? <span className="whoami-meta"> ({event.actorTenant})</span> : null}
              </>
            ),
          },
          ...(showTenant ? [{ header: "Tenant", cell: (event: AuditEvent) => event.tenant ?? "—" }] : []),
          { header: "Action", cell: (event) => <code>{event.action}</code> },
          { header: "Target", cell: (event) => event.target ?? event.targetKind ?? "—" },
          {
            header: "Result",
            cell: (event) => <span className={`badge badge-${event.result}`}>{event.result}</span>,
          },
        ]}
      />
      <OlderPages query={query} noun="events" />
    </>
  );
}
