/**
 * A tenant's quota ledger: what its control plane's objects use, kept current by list-watches (as
 * Ring0), plus reservations for requests the webhook admitted but the watch has not shown yet.
 * Check-and-reserve is one synchronous step, so two requests racing for the last unit cannot both
 * pass (the webhook handler never awaits between reading the total and reserving).
 *
 * A reservation ends when the watch shows the object (its usage is then counted from the object)
 * or after `reservationTtlMs` (the request failed after admission: an AlreadyExists, another
 * webhook's refusal). Until then it counts: Ring0 errs towards refusing, never towards
 * oversubscribing.
 */

import type { QuotaResource } from "@/server/core/quota-resources";
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { K8sError } from "@/server/k8s/errors";
import { type ListWatch, listAndWatch } from "@/server/k8s/watch";
import type { Logger } from "@/server/logger";
import type { Usage } from "@/server/quotas/usage";

/** A kind the ledger follows: its collection path and how much one object uses (undefined: nothing). */
export interface LedgerKind {
  kind: string;
  path: string;
  usageOf(object: unknown, now: Date): Usage | undefined;
}

export interface Ledger {
  /** Resolves once every kind is listed (rejects after `timeoutMs` with the last list error). */
  synced(timeoutMs: number): Promise<void>;
  /** Total usage: counted objects plus live reservations. */
  total(): Usage;
  /** Usage of one object as the ledger counts it now (undefined: not there or not counted). */
  usageOf(kind: string, namespace: string | undefined, name: string): Usage | undefined;
  /** The objects of a kind as last seen (for sums over e.g. ResourceQuotas). */
  objects(kind: string): unknown[];
  /** Reserve `usage` for an admitted request on an object (replaces an earlier reservation of the same key). */
  reserve(kind: string, namespace: string | undefined, name: string, usage: Usage): void;
  /** Counted objects per kind (for figures and tests). */
  counts(): Record<string, number>;
  stop(): void;
}

export interface LedgerOptions {
  conn: ClusterConnection;
  kinds: LedgerKind[];
  logger: Logger;
  reservationTtlMs?: number;
  now?: () => Date;
  /** Called when anything counted changes (objects or reservations). */
  onChange?: () => void;
  /** Test seam: the list-watch starter. */
  startWatch?: typeof listAndWatch;
}

const DEFAULT_RESERVATION_TTL_MS = 30_000;

function keyOf(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}

function objectKey(object: unknown): string {
  const metadata = (object as { metadata?: { namespace?: string; name?: string } } | null)?.metadata;
  return keyOf(metadata?.namespace, metadata?.name ?? "");
}

export function addUsageInto(target: Usage, usage: Usage | undefined, sign: 1n | -1n = 1n): void {
  if (!usage) return;
  for (const [resource, amount] of Object.entries(usage) as [QuotaResource, bigint][]) {
    const next = (target[resource] ?? 0n) + sign * amount;
    if (next === 0n) delete target[resource];
    else target[resource] = next;
  }
}

export function createLedger(options: LedgerOptions): Ledger {
  const log = options.logger.child({ component: "quota-ledger" });
  const now = options.now ?? (() => new Date());
  const ttl = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
  const start = options.startWatch ?? listAndWatch;
  const counted = new Map<string, Map<string, { object: unknown; usage: Usage | undefined }>>();
  const reservations = new Map<string, { usage: Usage; expiresAt: number }>();
  const sum: Usage = {};
  const synced = new Set<string>();
  const errors = new Map<string, K8sError>();
  const waiters = new Set<() => void>();
  const watches: ListWatch[] = [];

  const changed = () => options.onChange?.();

  const expire = () => {
    const at = now().getTime();
    for (const [key, reservation] of reservations) {
      if (reservation.expiresAt <= at) reservations.delete(key);
    }
  };

  const reservationKey = (kind: string, key: string) => `${kind}|${key}`;

  const put = (kind: string, object: unknown) => {
    const table = counted.get(kind);
    const definition = options.kinds.find((candidate) => candidate.kind === kind);
    if (!table || !definition) return;
    const key = objectKey(object);
    addUsageInto(sum, table.get(key)?.usage, -1n);
    const usage = definition.usageOf(object, now());
    table.set(key, { object, usage });
    addUsageInto(sum, usage);
    // The object is visible now: its usage counts from here, not from the reservation.
    reservations.delete(reservationKey(kind, key));
  };

  const remove = (kind: string, object: unknown) => {
    const table = counted.get(kind);
    if (!table) return;
    const key = objectKey(object);
    addUsageInto(sum, table.get(key)?.usage, -1n);
    table.delete(key);
  };

  for (const definition of options.kinds) {
    counted.set(definition.kind, new Map());
    watches.push(
      start<unknown>(
        options.conn,
        { path: definition.path },
        {
          onSync(items) {
            const table = counted.get(definition.kind) as Map<string, { object: unknown; usage?: Usage }>;
            for (const entry of table.values()) addUsageInto(sum, entry.usage, -1n);
            table.clear();
            for (const item of items) put(definition.kind, item);
            synced.add(definition.kind);
            errors.delete(definition.kind);
            for (const wake of waiters) wake();
            changed();
          },
          onEvent(type, object) {
            if (type === "DELETED") remove(definition.kind, object);
            else put(definition.kind, object);
            changed();
          },
          onError(error) {
            errors.set(definition.kind, error);
            log.warn("list-watch failed; retrying", { kind: definition.kind, error: error.message });
            for (const wake of waiters) wake();
          },
        },
      ),
    );
  }

  return {
    synced(timeoutMs) {
      const done = () => options.kinds.every((definition) => synced.has(definition.kind));
      if (done()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const wake = () => {
          if (!done()) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          const error = [...errors.values()][0];
          reject(
            new Error(
              `the tenant's objects could not be listed${error ? `: ${error.message}` : ` within ${timeoutMs / 1000} s`}`,
            ),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(wake);
        };
        waiters.add(wake);
      });
    },
    total() {
      expire();
      const total: Usage = { ...sum };
      for (const reservation of reservations.values()) addUsageInto(total, reservation.usage);
      return total;
    },
    usageOf(kind, namespace, name) {
      return counted.get(kind)?.get(keyOf(namespace, name))?.usage;
    },
    objects(kind) {
      return [...(counted.get(kind)?.values() ?? [])].map((entry) => entry.object);
    },
    reserve(kind, namespace, name, usage) {
      if (Object.keys(usage).length === 0) return;
      reservations.set(reservationKey(kind, keyOf(namespace, name)), {
        usage,
        expiresAt: now().getTime() + ttl,
      });
      changed();
    },
    counts() {
      return Object.fromEntries([...counted.entries()].map(([kind, table]) => [kind, table.size]));
    },
    stop() {
      for (const watch of watches) watch.stop();
      for (const wake of waiters) wake();
    },
  };
}
