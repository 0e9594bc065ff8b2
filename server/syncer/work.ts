/**
 * The syncer's work: every change becomes a key (kind|namespace|name) in its tenant's fair queue,
 * and workers take keys by weighted round robin. A key being reconciled is never reconciled twice
 * at once (a change meanwhile queues it again after); a failure retries with backoff up to 30 s,
 * so nothing a tenant writes can stop other keys.
 */
import type { Clock } from "@/server/controllers/clock";
import { isUnreachable } from "@/server/k8s/errors";
import type { Logger } from "@/server/logger";
import type { FairQueue } from "./contracts";
import { createFairQueue } from "./fair-queue";
import { createInFlightKeys, retryDelayMs } from "./in-flight";
import { messageOf } from "./session";

export interface WorkOptions {
  clock: Clock;
  log: Logger;
  /** Whether a key of `tenant` may be queued now (the syncer runs, serves the tenant and has not refused it). */
  accepts(tenant: string): boolean;
  /** One key's reconcile; "retry" asks for another look soon (the tenant's caches are not synced yet). */
  reconcile(tenant: string, key: string): Promise<"done" | "retry">;
  /** A reconcile got no answer from the tenant's control plane. */
  unreachable(tenant: string): Promise<void>;
  /** A key reconciled to the end. */
  done(tenant: string, key: string): void;
}

export interface Work {
  /** The fair queue of the current run (tenants are paused, resumed and weighted there). */
  queue(): FairQueue<string>;
  /** A fresh queue for a new run. */
  renew(): void;
  enqueue(tenant: string, key: string): void;
  startWorkers(count: number): void;
  cancelRetries(): void;
  /** Resolves once every worker has returned (after the queue is shut down). */
  workersDone(): Promise<void>;
  /** Forget the keys in flight (the run has stopped). */
  clear(): void;
}

export function createWork(options: WorkOptions): Work {
  const { clock, log } = options;
  let queue: FairQueue<string> = createFairQueue<string>({ clock });
  /** `${tenant}\0${key}` being reconciled now, those changed meanwhile, and failures in a row. */
  const inFlight = createInFlightKeys();
  const retryTimers = new Map<string, () => void>();
  let workers: Promise<void>[] = [];

  function enqueue(tenant: string, key: string): void {
    if (!options.accepts(tenant)) return;
    const id = `${tenant}\0${key}`;
    if (inFlight.offer(id)) queue.add(tenant, key);
  }

  function enqueueLater(tenant: string, key: string, ms: number): void {
    const id = `${tenant}\0${key}`;
    if (retryTimers.has(id)) return;
    const cancel = clock.setTimer(() => {
      retryTimers.delete(id);
      enqueue(tenant, key);
    }, ms);
    retryTimers.set(id, cancel);
  }

  async function work(): Promise<void> {
    for (;;) {
      const next = await queue.next();
      if (!next) return;
      const { tenant, item: key } = next;
      const id = `${tenant}\0${key}`;
      inFlight.begin(id);
      try {
        const outcome = await options.reconcile(tenant, key);
        inFlight.succeeded(id);
        if (outcome === "retry") enqueueLater(tenant, key, 500);
        else options.done(tenant, key);
      } catch (error) {
        const attempt = inFlight.failed(id);
        const delay = retryDelayMs(attempt);
        if (isUnreachable(error)) await options.unreachable(tenant);
        if (attempt <= 3)
          log.debug("sync failed; retrying", { tenant, key, attempt, error: messageOf(error) });
        else log.warn("sync keeps failing; retrying", { tenant, key, attempt, error: messageOf(error) });
        enqueueLater(tenant, key, delay);
      } finally {
        if (inFlight.finish(id)) enqueue(tenant, key);
      }
    }
  }

  return {
    queue: () => queue,
    renew() {
      queue = createFairQueue<string>({ clock });
    },
    enqueue,
    startWorkers(count) {
      workers = Array.from({ length: count }, () => work());
    },
    cancelRetries() {
      for (const cancel of retryTimers.values()) cancel();
      retryTimers.clear();
    },
    async workersDone() {
      await Promise.allSettled(workers);
      workers = [];
    },
    clear() {
      inFlight.clear();
    },
  };
}
