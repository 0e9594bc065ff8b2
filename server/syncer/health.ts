/**
 * The syncer's health for the operator console: a projection of `Syncer.stats()` per tenant —
 * queue depth, oldest item age, share of work served, weight, paused, patroller counts per kind.
 */
import { getSyncer, type RunningSyncer } from "@/server/syncer/registry";
import type { PatrolCounts, SyncerStats } from "@/server/syncer/syncer";

export interface TenantSyncHealth {
  tenant: string;
  depth: number;
  oldestAgeMs: number;
  served: number;
  /** served / all tenants' served, 0..1; 0 while nothing was served yet. */
  share: number;
  weight: number;
  paused: boolean;
  /** starting, syncing or unreachable; null when the syncer has no session for the tenant. */
  state: string | null;
  vNodes: number;
  patrol: Record<string, PatrolCounts>;
}

export type SyncerHealth =
  | { running: false; message: string }
  | { running: true; patrols: number; tenants: TenantSyncHealth[] };

export const notRunning =
  "The syncer is not running on this replica (another replica leads, or it has not started yet).";

export function projectHealth(stats: SyncerStats): SyncerHealth {
  const names = new Set([
    ...Object.keys(stats.queue),
    ...Object.keys(stats.patrol),
    ...Object.keys(stats.tenants),
  ]);
  const total = Object.values(stats.queue).reduce((sum, queue) => sum + queue.served, 0);
  const tenants = [...names].sort().map((tenant): TenantSyncHealth => {
    const queue = stats.queue[tenant];
    const patrol: Record<string, PatrolCounts> = {};
    for (const [kind, counts] of Object.entries(stats.patrol[tenant] ?? {}))
      if (counts)
        patrol[kind] = { checked: counts.checked, mismatched: counts.mismatched, repaired: counts.repaired };
    return {
      tenant,
      depth: queue?.depth ?? 0,
      oldestAgeMs: queue?.oldestAgeMs ?? 0,
      served: queue?.served ?? 0,
      share: total > 0 ? (queue?.served ?? 0) / total : 0,
      weight: queue?.weight ?? 1,
      paused: queue?.paused ?? false,
      state: stats.tenants[tenant]?.state ?? null,
      vNodes: stats.tenants[tenant]?.vNodes ?? 0,
      patrol,
    };
  });
  return { running: true, patrols: stats.patrols, tenants };
}

export function syncerHealth(syncer: RunningSyncer | null = getSyncer()): SyncerHealth {
  if (!syncer) return { running: false, message: notRunning };
  return projectHealth(syncer.stats());
}

/** The health once and again whenever it changes, polled every `intervalMs`. */
export async function* watchSyncerHealth(
  signal: AbortSignal | undefined,
  intervalMs = 2_000,
): AsyncGenerator<SyncerHealth> {
  let last = "";
  while (!signal?.aborted) {
    const health = syncerHealth();
    const key = JSON.stringify(health);
    if (key !== last) {
      last = key;
      yield health;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, intervalMs);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      }
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}
