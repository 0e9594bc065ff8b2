"use client";

import { useSuspenseQuery } from "@tanstack/react-query";
import Link from "next/link";
import styles from "@/components/quotas/quotas.module.css";
import { PercentText, UsageBar } from "@/components/quotas/usage-bar";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";

const atFormat = new Intl.DateTimeFormat("en-GB", {
  dateStyle: "medium",
  timeStyle: "short",
  timeZone: "UTC",
});

/** "1.5× (overcommitted)" / "0.45×". */
function Overcommit({ ratio }: { ratio: number | null }) {
  if (ratio === null) return <span className={styles.muted}>no capacity</span>;
  const text = `${ratio}×`;
  return ratio > 1 ? <span className={styles.over}>{text} (overcommitted)</span> : <span>{text}</span>;
}

/** Quotas across tenants: what is promised against what the super cluster has, and who uses most. */
export function QuotaOverview() {
  const trpc = useTRPC();
  const { data } = useSuspenseQuery(
    trpc.quotas.usage.overview.queryOptions(undefined, { refetchInterval: 30_000 }),
  );
  return (
    <>
      <section aria-labelledby="allocation-heading">
        <h2 id="allocation-heading">Allocation vs capacity</h2>
        <p className={styles.muted}>
          Allocated: the sum of the tenants' quota limits. Capacity: the allocatable of the super cluster's{" "}
          {data.nodes.schedulable} schedulable nodes (of {data.nodes.total}). Above 1× the tenants were
          promised more than exists.
        </p>
        <table className="data" aria-label="Allocation vs capacity">
          <thead>
            <tr>
              <th scope="col">Resource</th>
              <th scope="col">Allocated</th>
              <th scope="col">Capacity</th>
              <th scope="col" style={{ width: "25%" }}>
                Allocation
              </th>
              <th scope="col">Overcommit</th>
              <th scope="col">Tenants without a limit</th>
            </tr>
          </thead>
          <tbody>
            {data.allocation.map((row) => (
              <tr key={row.resource}>
                <th scope="row">
                  {row.label} <code className={styles.muted}>{row.resource}</code>
                </th>
                <td className={styles.numbers}>{row.allocated}</td>
                <td className={styles.numbers}>{row.capacity}</td>
                <td>
                  <UsageBar
                    percent={row.overcommit === null ? null : Math.round(row.overcommit * 1000) / 10}
                    label={`${row.label}: ${row.allocated} allocated of ${row.capacity}`}
                  />
                </td>
                <td>
                  <Overcommit ratio={row.overcommit} />
                </td>
                <td className={styles.numbers}>{row.tenantsUnlimited}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <div className={`${styles.columns} ${styles.section}`}>
        <ConsumerTable title="Top consumers: CPU requests" rows={data.top.cpu} />
        <ConsumerTable title="Top consumers: memory requests" rows={data.top.memory} />
      </div>

      <section className={styles.section} aria-labelledby="tenant-quotas-heading">
        <h2 id="tenant-quotas-heading">Tenants</h2>
        <p className={styles.muted}>Usage from each tenant's latest sample.</p>
        {data.tenants.length === 0 ? (
          <EmptyState title="No tenants" />
        ) : (
          <table className="data" aria-label="Tenant quotas">
            <thead>
              <tr>
                <th scope="col">Tenant</th>
                <th scope="col">Limits (used / limit)</th>
                <th scope="col">Sampled</th>
              </tr>
            </thead>
            <tbody>
              {data.tenants.map((tenant) => (
                <tr key={tenant.tenant}>
                  <th scope="row">
                    <Link href={`/operator/tenants/${tenant.tenant}`}>{tenant.tenant}</Link>
                  </th>
                  <td>
                    {tenant.hasQuota ? (
                      <ul className={styles.refusals} style={{ gap: "0.25rem" }}>
                        {tenant.resources
                          .filter((row) => row.limit !== null)
                          .map((row) => (
                            <li
                              key={row.resource}
                              style={{ display: "flex", gap: "0.5rem", alignItems: "center" }}
                            >
                              <code style={{ minWidth: "11rem" }}>{row.resource}</code>
                              <span className={styles.numbers} style={{ minWidth: "8rem" }}>
                                {row.used} / {row.limit}
                              </span>
                              <UsageBar percent={row.percent} label={`${tenant.tenant} ${row.resource}`} />
                              <PercentText percent={row.percent} />
                            </li>
                          ))}
                      </ul>
                    ) : (
                      <span className={styles.muted}>No tenant quota</span>
                    )}
                  </td>
                  <td className={styles.muted}>
                    {tenant.sampledAt ? atFormat.format(tenant.sampledAt) : "never"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

function ConsumerTable({
  title,
  rows,
}: {
  title: string;
  rows: { tenant: string; used: string; ofCapacity: number | null }[];
}) {
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {rows.length === 0 ? (
        <EmptyState title="Nothing sampled yet" />
      ) : (
        <table className="data" aria-label={title}>
          <thead>
            <tr>
              <th scope="col">Tenant</th>
              <th scope="col">Used</th>
              <th scope="col">Of capacity</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.tenant}>
                <th scope="row">{row.tenant}</th>
                <td className={styles.numbers}>{row.used}</td>
                <td className={styles.numbers}>{row.ofCapacity === null ? "—" : `${row.ofCapacity}%`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
