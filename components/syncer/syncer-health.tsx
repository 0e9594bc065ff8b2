"use client";
import Link from "next/link";
import { useTRPC } from "@/components/trpc/client";
import { useLiveQuery } from "@/components/trpc/live-query";
import { EmptyState } from "@/components/ui/empty-state";
import { LiveBadge } from "@/components/ui/live-badge";
import { StatusBadge } from "@/components/ui/status-badge";
import type { TenantSyncHealth } from "@/server/syncer/health";

/** Queue waits are seconds to minutes; one decimal below ten seconds. */
function waited(ms: number): string {
  if (ms <= 0) return "—";
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

const percent = (share: number) => `${(share * 100).toFixed(share > 0 && share < 0.1 ? 1 : 0)}%`;

/** The syncer's health, kept live: the query hydrated by the page, then the 2 s feed. */
function useSyncerHealth() {
  const trpc = useTRPC();
  const { data, feed } = useLiveQuery(trpc.syncer.health.queryOptions(), (onData) =>
    trpc.syncer.watchHealth.subscriptionOptions(undefined, { onData }),
  );
  return { health: data, status: feed.status };
}

function QueueState({ paused, state }: { paused: boolean; state: string | null }) {
  if (paused) return <StatusBadge tone="warning">Paused</StatusBadge>;
  if (state === "unreachable") return <StatusBadge tone="failure">Unreachable</StatusBadge>;
  if (state === "syncing") return <StatusBadge tone="success">Syncing</StatusBadge>;
  return <StatusBadge tone="progress">{state === "starting" ? "Starting" : "Idle"}</StatusBadge>;
}

function PatrolCounts({
  patrol,
}: {
  patrol: Record<string, { checked: number; mismatched: number; repaired: number }>;
}) {
  const kinds = Object.entries(patrol).sort(([a], [b]) => a.localeCompare(b));
  if (kinds.length === 0) return <>not patrolled yet</>;
  return (
    <ul
      className="chips"
      aria-label="Patroller counts (checked / mismatched / repaired)"
      style={{ margin: 0 }}
    >
      {kinds.map(([kind, counts]) => (
        <li key={kind}>
          {kind}: {counts.checked} / {counts.mismatched} / {counts.repaired}
        </li>
      ))}
    </ul>
  );
}

/** The column headers both health tables share (after the per-tenant table's Tenant column). */
function HealthHeaders() {
  return (
    <>
      <th scope="col">State</th>
      <th scope="col">Queue depth</th>
      <th scope="col">Oldest item</th>
      <th scope="col">Share served</th>
      <th scope="col">Weight</th>
      <th scope="col">vNodes</th>
      <th scope="col">Patroller (checked / mismatched / repaired)</th>
    </>
  );
}

/** One tenant's cells under HealthHeaders. */
function HealthCells({ row }: { row: TenantSyncHealth }) {
  return (
    <>
      <td>
        <QueueState paused={row.paused} state={row.state} />
      </td>
      <td>{row.depth}</td>
      <td>{waited(row.oldestAgeMs)}</td>
      <td>
        {percent(row.share)} <span className="whoami-meta">({row.served})</span>
      </td>
      <td>{row.weight}</td>
      <td>{row.vNodes}</td>
      <td>
        <PatrolCounts patrol={row.patrol} />
      </td>
    </>
  );
}

/** Every tenant the syncer serves on this replica (the /operator/syncer page). */
export function SyncerHealthTable() {
  const { health, status } = useSyncerHealth();
  return (
    <section aria-label="Syncer health">
      <p className="toolbar">
        <LiveBadge subject="Syncer health" status={status} />
        {health.running ? <span className="whoami-meta">{health.patrols} patrols since start</span> : null}
      </p>
      {!health.running ? (
        <EmptyState title="Not running on this replica">
          <p>{health.message}</p>
        </EmptyState>
      ) : health.tenants.length === 0 ? (
        <EmptyState title="No tenants synced yet">
          <p>The syncer serves tenants whose control planes are Ready.</p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Syncer health per tenant">
          <thead>
            <tr>
              <th scope="col">Tenant</th>
              <HealthHeaders />
            </tr>
          </thead>
          <tbody>
            {health.tenants.map((tenant) => (
              <tr key={tenant.tenant}>
                <td>
                  <Link href={`/operator/tenants/${encodeURIComponent(tenant.tenant)}`}>{tenant.tenant}</Link>
                </td>
                <HealthCells row={tenant} />
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** One tenant's line of the syncer's health (the operator tenant page). */
export function TenantSyncerSection({ tenant }: { tenant: string }) {
  const { health, status } = useSyncerHealth();
  const mine = health.running ? health.tenants.find((candidate) => candidate.tenant === tenant) : undefined;
  return (
    <section aria-labelledby="syncer-heading" style={{ marginTop: "1.5rem" }}>
      <h2 id="syncer-heading">Syncer</h2>
      <p className="toolbar">
        <LiveBadge subject="Syncer" status={status} />
      </p>
      {!health.running ? (
        <p className="alert alert-info" role="status">
          {health.message}
        </p>
      ) : !mine ? (
        <p className="alert alert-info" role="status">
          The syncer does not serve this tenant yet (its control plane is not Ready, or nothing was synced).
        </p>
      ) : (
        <table className="data" aria-label="Syncer health">
          <thead>
            <tr>
              <HealthHeaders />
            </tr>
          </thead>
          <tbody>
            <tr>
              <HealthCells row={mine} />
            </tr>
          </tbody>
        </table>
      )}
    </section>
  );
}
