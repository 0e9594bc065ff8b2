/**
 * A work queue of keys in the style of client-go's workqueue:
 * - deduplicating: a key waiting in the queue is queued once, however often it is added;
 * - per-key serialisation: a key handed out by `get()` is not handed out again until `done(key)`;
 *   adding it meanwhile marks it dirty, and it is queued once more when `done` is called;
 * - delayed adds (`addAfter`) keep only the earliest pending time per key;
 * - rate-limited adds (`addRateLimited`) wait a per-key exponential backoff until `forget(key)`.
 * Time comes from an injected clock.
 */
import { createBackoff, type KeyedBackoff } from "./backoff";
import { type Clock, systemClock } from "./clock";

export interface WorkQueue<K extends string = string> {
  add(key: K): void;
  /** Add `key` after `ms`; if it is already waiting to be added earlier, that earlier time wins. */
  addAfter(key: K, ms: number): void;
  /** Add `key` after its next backoff delay (failures count up until `forget`). */
  addRateLimited(key: K): void;
  /** Reset `key`'s backoff (after a success, or when giving up on it). */
  forget(key: K): void;
  /** Rate-limited adds of `key` since it was last forgotten. */
  numRequeues(key: K): number;
  /** The next key to process, or undefined once the queue is shut down. */
  get(): Promise<K | undefined>;
  /** Processing of `key` finished; a key added meanwhile is queued again. */
  done(key: K): void;
  /**
   * Stop: pending and future `get()` calls resolve undefined, waiting keys and delayed adds are
   * dropped. Keys being processed may still be `done`.
   */
  shutDown(): void;
  isShuttingDown(): boolean;
  /** Keys waiting to be handed out (not counting delayed adds or keys being processed). */
  len(): number;
  /** Keys handed out by `get()` and not yet `done`. */
  processingCount(): number;
  /** Delayed adds not yet due. */
  delayedCount(): number;
}

export interface WorkQueueOptions {
  clock?: Clock;
  backoff?: KeyedBackoff;
}

export function createWorkQueue<K extends string = string>(options: WorkQueueOptions = {}): WorkQueue<K> {
  const clock = options.clock ?? systemClock;
  const backoff = options.backoff ?? createBackoff();
  const queue: K[] = [];
  // Keys that need processing: waiting in `queue`, or re-added while being processed.
  const dirty = new Set<K>();
  const processing = new Set<K>();
  const delayed = new Map<K, { at: number; cancel: () => void }>();
  const waiters: ((key: K | undefined) => void)[] = [];
  let shuttingDown = false;

  function push(key: K): void {
    const waiter = waiters.shift();
    if (waiter) {
      dirty.delete(key);
      processing.add(key);
      waiter(key);
    } else {
      queue.push(key);
    }
  }

  const workQueue: WorkQueue<K> = {
    add(key) {
      if (shuttingDown || dirty.has(key)) return;
      dirty.add(key);
      if (processing.has(key)) return;
      push(key);
    },

    addAfter(key, ms) {
      if (shuttingDown) return;
      if (!(ms > 0)) {
        workQueue.add(key);
        return;
      }
      const at = clock.now() + ms;
      const pending = delayed.get(key);
      if (pending) {
        if (pending.at <= at) return;
        pending.cancel();
      }
      const cancel = clock.setTimer(() => {
        delayed.delete(key);
        workQueue.add(key);
      }, ms);
      delayed.set(key, { at, cancel });
    },

    addRateLimited(key) {
      workQueue.addAfter(key, backoff.next(key));
    },

    forget(key) {
      backoff.reset(key);
    },

    numRequeues: (key) => backoff.attempts(key),

    get() {
      if (shuttingDown) return Promise.resolve(undefined);
      const key = queue.shift();
      if (key !== undefined) {
        dirty.delete(key);
        processing.add(key);
        return Promise.resolve(key);
      }
      return new Promise((resolve) => waiters.push(resolve));
    },

    done(key) {
      if (!processing.delete(key)) return;
      if (dirty.has(key) && !shuttingDown) push(key);
    },

    shutDown() {
      if (shuttingDown) return;
      shuttingDown = true;
      for (const { cancel } of delayed.values()) cancel();
      delayed.clear();
      queue.length = 0;
      dirty.clear();
      for (const waiter of waiters.splice(0)) waiter(undefined);
    },

    isShuttingDown: () => shuttingDown,
    len: () => queue.length,
    processingCount: () => processing.size,
    delayedCount: () => delayed.size,
  };
  return workQueue;
}
