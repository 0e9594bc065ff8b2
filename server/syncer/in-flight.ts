/**
 * The engine's bookkeeping of keys being reconciled: a key is never reconciled by two workers at
 * once, a change that arrives during its reconcile is not lost (the key is queued again when the
 * reconcile ends), and a key that keeps failing is retried later and later.
 */

export interface InFlightKeys {
  /** A change to `id`: true when it should be queued now, false when a reconcile of it runs (it is queued again after). */
  offer(id: string): boolean;
  /** A worker starts reconciling `id`. */
  begin(id: string): void;
  /** That reconcile succeeded: the key's failures are forgotten. */
  succeeded(id: string): void;
  /** That reconcile failed: resolves to the attempt number (1 for the first failure in a row). */
  failed(id: string): number;
  /** The reconcile of `id` ended: true when it changed meanwhile and must be queued again. */
  finish(id: string): boolean;
  clear(): void;
}

export function createInFlightKeys(): InFlightKeys {
  const processing = new Set<string>();
  const dirty = new Set<string>();
  const attempts = new Map<string, number>();
  return {
    offer(id) {
      if (!processing.has(id)) return true;
      dirty.add(id);
      return false;
    },
    begin(id) {
      processing.add(id);
    },
    succeeded(id) {
      attempts.delete(id);
    },
    failed(id) {
      const attempt = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, attempt);
      return attempt;
    },
    finish(id) {
      processing.delete(id);
      return dirty.delete(id);
    },
    clear() {
      processing.clear();
      dirty.clear();
      attempts.clear();
    },
  };
}

/** Delay before retrying a key after its `attempt`th failure in a row: 250 ms doubling, at most 30 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(30_000, 250 * 2 ** Math.min(Math.max(attempt, 1) - 1, 10));
}
