/**
 * The syncer's per-tenant fair queue (issue 5, seed 002's "queuing unfairness"): one tenant creating
 * thousands of pods must not starve the others. Each tenant has its own FIFO; `next()` picks among
 * tenants with work (and not paused) by smooth weighted round robin, the scheme nginx uses for
 * upstreams: every pick adds each candidate's weight to its credit, serves the candidate with the
 * most credit and takes the candidates' total weight from it. Over any run of picks with the same
 * busy tenants, a tenant of weight w out of a total W is served w times in every W picks, spread
 * evenly rather than in bursts, so a tenant with few items waits at most about W / w picks for each.
 *
 * String items are keys: adding a key that is already waiting in that tenant's queue is a no-op (as
 * in client-go's workqueue); other items are queued as given. Ages come from an injected clock.
 */
import { type Clock, systemClock } from "@/server/controllers/clock";
import type { FairQueue } from "./contracts";

export const MIN_WEIGHT = 1;
export const MAX_WEIGHT = 100;
export const DEFAULT_WEIGHT = 10;

interface Entry<T> {
  item: T;
  addedAt: number;
}

interface TenantQueue<T> {
  entries: Entry<T>[];
  /** Index of the first waiting entry; served entries before it are compacted away in batches. */
  head: number;
  /** Keys waiting in `entries` (string items only), for de-duplication. */
  waitingKeys: Set<string>;
  weight: number;
  /** Smooth weighted round robin credit. */
  credit: number;
  served: number;
  paused: boolean;
}

export interface FairQueueOptions {
  /** Weight of a tenant whose weight was never set (default 10). */
  defaultWeight?: number;
  clock?: Clock;
}

/** Weights outside 1..100 (or not numbers) are clamped rather than refused: a bad spec must not stop the syncer. */
function clampWeight(weight: number, fallback: number): number {
  if (!Number.isFinite(weight)) return fallback;
  return Math.min(MAX_WEIGHT, Math.max(MIN_WEIGHT, Math.round(weight)));
}

export function createFairQueue<T>(options: FairQueueOptions = {}): FairQueue<T> {
  const clock = options.clock ?? systemClock;
  const defaultWeight = clampWeight(options.defaultWeight ?? DEFAULT_WEIGHT, DEFAULT_WEIGHT);
  const tenants = new Map<string, TenantQueue<T>>();
  const waiters: ((value: { tenant: string; item: T } | null) => void)[] = [];
  let shutDown = false;

  function tenantQueue(tenant: string): TenantQueue<T> {
    let queue = tenants.get(tenant);
    if (!queue) {
      queue = {
        entries: [],
        head: 0,
        waitingKeys: new Set(),
        weight: defaultWeight,
        credit: 0,
        served: 0,
        paused: false,
      };
      tenants.set(tenant, queue);
    }
    return queue;
  }

  function depth(queue: TenantQueue<T>): number {
    return queue.entries.length - queue.head;
  }

  /** The next item by smooth weighted round robin, or null if no unpaused tenant has work. */
  function pick(): { tenant: string; item: T } | null {
    let total = 0;
    let chosen: [string, TenantQueue<T>] | undefined;
    for (const [tenant, queue] of tenants) {
      if (queue.paused || depth(queue) === 0) continue;
      queue.credit += queue.weight;
      total += queue.weight;
      if (!chosen || queue.credit > chosen[1].credit) chosen = [tenant, queue];
    }
    if (!chosen) return null;
    const [tenant, queue] = chosen;
    queue.credit -= total;
    const entry = queue.entries[queue.head++]!;
    if (queue.head >= 1024 && queue.head * 2 >= queue.entries.length) {
      queue.entries = queue.entries.slice(queue.head);
      queue.head = 0;
    }
    if (typeof entry.item === "string") queue.waitingKeys.delete(entry.item);
    // An idle tenant starts afresh: credit saved while idle would let it burst past the others later.
    if (depth(queue) === 0) queue.credit = 0;
    queue.served++;
    return { tenant, item: entry.item };
  }

  function dispatch(): void {
    while (waiters.length > 0) {
      const next = pick();
      if (!next) return;
      waiters.shift()!(next);
    }
  }

  return {
    add(tenant, item) {
      if (shutDown) return;
      const queue = tenantQueue(tenant);
      if (typeof item === "string") {
        if (queue.waitingKeys.has(item)) return;
        queue.waitingKeys.add(item);
      }
      queue.entries.push({ item, addedAt: clock.now() });
      dispatch();
    },

    next() {
      if (shutDown) return Promise.resolve(null);
      const next = pick();
      if (next) return Promise.resolve(next);
      return new Promise((resolve) => waiters.push(resolve));
    },

    setWeight(tenant, weight) {
      tenantQueue(tenant).weight = clampWeight(weight, defaultWeight);
    },

    pause(tenant) {
      const queue = tenantQueue(tenant);
      queue.paused = true;
      queue.credit = 0;
    },

    resume(tenant) {
      const queue = tenants.get(tenant);
      if (!queue?.paused) return;
      queue.paused = false;
      dispatch();
    },

    removeTenant(tenant) {
      tenants.delete(tenant);
    },

    stats() {
      const now = clock.now();
      const result: ReturnType<FairQueue<T>["stats"]> = {};
      for (const [tenant, queue] of tenants) {
        const oldest = queue.entries[queue.head];
        result[tenant] = {
          depth: depth(queue),
          oldestAgeMs: oldest ? Math.max(0, now - oldest.addedAt) : 0,
          served: queue.served,
          weight: queue.weight,
          paused: queue.paused,
        };
      }
      return result;
    },

    shutdown() {
      if (shutDown) return;
      shutDown = true;
      tenants.clear();
      for (const resolve of waiters.splice(0)) resolve(null);
    },
  };
}
