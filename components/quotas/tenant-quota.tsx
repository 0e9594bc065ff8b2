"use client";

import { useQuery, useSuspenseQuery } from "@tanstack/react-query";
import { Suspense, useState, useTransition } from "react";
import { LineChart } from "@/components/quotas/line-chart";
import styles from "@/components/quotas/quotas.module.css";
import { QuotaRefusals } from "@/components/quotas/refusals";
import { PercentText, UsageBar } from "@/components/quotas/usage-bar";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import type { QuotaResource } from "@/server/core/quota-resources";

export const usageRefreshMs = 15_000;

/** The anchor of a resource's limit row, which refusals link to. */
export const limitAnchor = (resource: string) => `limit-${resource}`;

const atFormat = new Intl.DateTimeFormat("en-GB", {
  dateStyle: "medium",
  timeStyle: "medium",
  timeZone: "UTC",
});

/** A tenant's quota in its portal: usage against limits, where it goes, how it changed, and refusals. */
export function TenantQuota({ tenant }: { tenant: string }) {
  const [workloadsBy, setWorkloadsBy] = useState<"cpu" | "memory">("cpu");
  const [sorting, startSorting] = useTransition();
  return (
    <>
      <Suspense fallback={<p role="status">Loading quota usage…</p>}>
        <QuotaUsage
          tenant={tenant}
          workloadsBy={workloadsBy}
          sorting={sorting}
          onSort={(by) => startSorting(() => setWorkloadsBy(by))}
        />
      </Suspense>
      <Suspense fallback={<p role="status">Loading refusals…</p>}>
        <QuotaRefusals tenant={tenant} />
      </Suspense>
    </>
  );
}

function QuotaUsage({
  tenant,
  workloadsBy,
  sorting,
  onSort,
}: {
  tenant: string;
  workloadsBy: "cpu" | "memory";
  sorting: boolean;
  onSort: (by: "cpu" | "memory") => void;
}) {
  const trpc = useTRPC();
  const { data } = useSuspenseQuery(
    trpc.quotas.usage.tenant.queryOptions({ tenant, workloadsBy }, { refetchInterval: usageRefreshMs }),
  );
  return (
    <>
      {data.hasQuota ? null : (
        <p className="alert alert-info" role="status">
          No tenant quota: tenant {tenant} is bounded only by its namespaces' ResourceQuotas and the super
          cluster's capacity. An operator can set one.
        </p>
      )}
      {data.ignored.length > 0 ? (
        <p className="alert alert-info">
          The quota also names {data.ignored.join(", ")}, which Ring0 does not enforce.
        </p>
      ) : null}
      {data.note ? (
        <p className="alert alert-info" role="status">
          {data.note}
        </p>
      ) : null}

      <section aria-labelledby="limits-heading">
        <h2 id="limits-heading">Usage against limits</h2>
        <p className={styles.muted}>
          {data.at ? `As of ${atFormat.format(data.at)} UTC` : "No usage known yet"}. Amounts are written as{" "}
          <code>kubectl describe resourcequota</code> prints them.
        </p>
        {data.resources.length === 0 ? (
          <EmptyState title="Nothing in use">
            <p>No limits are set and nothing is used yet.</p>
          </EmptyState>
        ) : (
          <table className="data" aria-label="Quota usage">
            <thead>
              <tr>
                <th scope="col">Resource</th>
                <th scope="col">Used</th>
                <th scope="col">Limit</th>
                <th scope="col" style={{ width: "30%" }}>
                  Usage
                </th>
                <th scope="col">%</th>
              </tr>
            </thead>
            <tbody>
              {data.resources.map((row) => (
                <tr key={row.resource} id={limitAnchor(row.resource)} className={styles.limitRow}>
                  <th scope="row">
                    {row.label} <code className={styles.muted}>{row.resource}</code>
                  </th>
                  <td className={styles.numbers}>{row.used}</td>
                  <td className={styles.numbers}>
                    {row.limit ?? <span className={styles.muted}>no limit</span>}
                  </td>
                  <td>
                    <UsageBar
                      percent={row.percent}
                      label={`${row.label}: ${row.used} of ${row.limit ?? "no limit"}`}
                    />
                  </td>
                  <td>
                    <PercentText percent={row.percent} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      {data.source === "live" ? (
        <>
          <section className={styles.section} aria-labelledby="namespaces-heading">
            <h2 id="namespaces-heading">By namespace</h2>
            <p className={styles.muted}>
              Each cell: what the namespace uses / its share (its ResourceQuota). A namespace without a share
              draws on the tenant's quota freely.
            </p>
            {data.namespaces.length === 0 ? (
              <EmptyState title="No namespaces" />
            ) : (
              <div style={{ overflowX: "auto" }}>
                <table className="data" aria-label="Usage by namespace">
                  <thead>
                    <tr>
                      <th scope="col">Namespace</th>
                      {data.namespaceColumns.map((resource) => (
                        <th scope="col" key={resource}>
                          <code>{resource}</code>
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {data.namespaces.map((row) => (
                      <tr key={row.namespace}>
                        <th scope="row">{row.namespace}</th>
                        {data.namespaceColumns.map((resource) => {
                          const cell = row.cells[resource as QuotaResource];
                          return (
                            <td
                              key={resource}
                              className={`${styles.numbers} ${cell?.over ? styles.over : ""}`}
                            >
                              {cell ? `${cell.used} / ${cell.share ?? "—"}` : "—"}
                            </td>
                          );
                        })}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>

          <section className={styles.section} aria-labelledby="workloads-heading" aria-busy={sorting}>
            <h2 id="workloads-heading">Top workloads</h2>
            <div className="toolbar">
              <label className="field">
                By
                <select
                  value={workloadsBy}
                  onChange={(event) => onSort(event.target.value === "memory" ? "memory" : "cpu")}
                >
                  <option value="cpu">CPU requests</option>
                  <option value="memory">Memory requests</option>
                </select>
              </label>
              <span className={styles.muted}>
                {data.workloads.length} of {data.workloadCount} workloads
              </span>
            </div>
            {data.workloads.length === 0 ? (
              <EmptyState title="No workloads">
                <p>No pods that count against the quota.</p>
              </EmptyState>
            ) : (
              <table className="data" aria-label="Top workloads">
                <thead>
                  <tr>
                    <th scope="col">Workload</th>
                    <th scope="col">Namespace</th>
                    <th scope="col">Pods</th>
                    <th scope="col">CPU requests</th>
                    <th scope="col">Memory requests</th>
                    <th scope="col">CPU limits</th>
                    <th scope="col">Memory limits</th>
                  </tr>
                </thead>
                <tbody>
                  {data.workloads.map((workload) => (
                    <tr key={`${workload.namespace}/${workload.kind}/${workload.name}`}>
                      <th scope="row">
                        {workload.kind}/{workload.name}
                      </th>
                      <td>{workload.namespace}</td>
                      <td className={styles.numbers}>{workload.pods}</td>
                      <td className={styles.numbers}>{workload.requestsCpu}</td>
                      <td className={styles.numbers}>{workload.requestsMemory}</td>
                      <td className={styles.numbers}>{workload.limitsCpu}</td>
                      <td className={styles.numbers}>{workload.limitsMemory}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
        </>
      ) : null}

      <QuotaHistory tenant={tenant} resources={data.resources.map((row) => row.resource)} />
    </>
  );
}

const ranges = [
  { hours: 1, label: "Last hour" },
  { hours: 6, label: "Last 6 hours" },
  { hours: 24, label: "Last 24 hours" },
  { hours: 168, label: "Last 7 days" },
  { hours: 720, label: "Last 30 days" },
];

function QuotaHistory({ tenant, resources }: { tenant: string; resources: QuotaResource[] }) {
  const trpc = useTRPC();
  const choices: QuotaResource[] = resources.length > 0 ? resources : ["requests.cpu"];
  const [picked, setPicked] = useState<QuotaResource>(choices[0]!);
  const resource = choices.includes(picked) ? picked : choices[0]!;
  const [sinceHours, setSinceHours] = useState(24);
  const history = useQuery(
    trpc.quotas.usage.history.queryOptions(
      { tenant, resource, sinceHours },
      { refetchInterval: 60_000, placeholderData: (previous) => previous },
    ),
  );
  return (
    <section className={styles.section} aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      <div className="toolbar">
        <label className="field">
          Resource
          <select value={resource} onChange={(event) => setPicked(event.target.value as QuotaResource)}>
            {choices.map((choice) => (
              <option key={choice} value={choice}>
                {choice}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          Period
          <select value={sinceHours} onChange={(event) => setSinceHours(Number(event.target.value))}>
            {ranges.map((range) => (
              <option key={range.hours} value={range.hours}>
                {range.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      {history.error ? (
        <p className="alert alert-error" role="alert">
          {history.error.message}
        </p>
      ) : !history.data ? (
        <p role="status">Loading history…</p>
      ) : history.data.points.length === 0 ? (
        <EmptyState title="No samples yet">
          <p>Usage is sampled at a fixed interval; the chart fills in as samples arrive.</p>
        </EmptyState>
      ) : (
        <div className="card">
          <LineChart
            points={history.data.points}
            from={history.data.from}
            to={history.data.to}
            kind={history.data.kind}
            label={`${history.data.label} (${history.data.resource}) used and limit, ${history.data.samples} samples`}
          />
        </div>
      )}
    </section>
  );
}
