"use client";

import { useSuspenseInfiniteQuery } from "@tanstack/react-query";
import { Suspense, useState, useTransition } from "react";
import { auditDateFormat, auditPageSize, auditPagination } from "@/components/audit/audit-query";
import { OlderPages } from "@/components/audit/older-pages";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";

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
  if (events.length === 0) {
    return (
      <EmptyState title="No audit events yet">
        <p>Sign-ins, sign-outs and every change made through Ring0 appear here.</p>
      </EmptyState>
    );
  }
  return (
    <>
      <table className="data" aria-label="Audit log">
        <thead>
          <tr>
            <th scope="col">When (UTC)</th>
            <th scope="col">Who</th>
            {showTenant ? <th scope="col">Tenant</th> : null}
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.id}>
              <td>
                <time dateTime={event.at.toISOString()}>{auditDateFormat.format(event.at)}</time>
              </td>
              <td>
                {event.actorName}
                {event.actorTenant ? <span className="whoami-meta"> ({event.actorTenant})</span> : null}
              </td>
              {showTenant ? <td>{event.tenant ?? "—"}</td> : null}
              <td>
                <code>{event.action}</code>
              </td>
              <td>{event.target ?? event.targetKind ?? "—"}</td>
              <td>
                <span className={`badge badge-${event.result}`}>{event.result}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <OlderPages query={query} noun="events" />
    </>
  );
}
