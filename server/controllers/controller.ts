/**
 * A controller runs a reconcile function over keys from a work queue with a few workers
 * (controller-runtime's model). What a reconcile returns or throws decides what happens next:
 * - a result, optionally `{ requeueAfterMs }`: success; the key's backoff is reset;
 * - a `NotYetError`: something it waits for is not ready; a quiet requeue after the given delay;
 * - a `TerminalError`: retrying will not help; the key is forgotten (the reconcile function has
 *   written a condition saying why);
 * - any other error: a retry with per-key exponential backoff.
 */
import { type Logger, logger as rootLogger } from "@/server/logger";
import { type BackoffOptions, createBackoff } from "./backoff";
import { type Clock, systemClock } from "./clock";
import { createWorkQueue, type WorkQueue } from "./queue";

export interface Result {
  /** Reconcile the key again after this delay (periodic resync, polling an external system). */
  requeueAfterMs?: number;
}

/** "Not yet": the world is not ready for the next step; requeue quietly after `requeueAfterMs`. */
export class NotYetError extends Error {
  override name = "NotYetError";
  constructor(
    message: string,
    readonly requeueAfterMs: number,
  ) {
    super(message);
  }
}

/** Retrying will not help (invalid spec, …); the reconciler has recorded why in a condition. */
export class TerminalError extends Error {
  override name = "TerminalError";
}

export interface ReconcileContext {
  /** Aborted when the controller stops; pass it to long requests and sleeps. */
  signal: AbortSignal;
  logger: Logger;
  /** Consecutive failures of this key before this attempt (0 on a first or post-success run). */
  failures: number;
}

export interface ControllerOptions<K extends string = string> {
  name: string;
  /** Resolving with nothing is a success without a requeue. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a reconciler may be an async function that returns nothing.
  reconcile: (key: K, context: ReconcileContext) => Promise<Result | undefined | void>;
  /** Keys reconciled in parallel (never the same key twice at once). Default 1. */
  workers?: number;
  clock?: Clock;
  logger?: Logger;
  backoff?: BackoffOptions;
}

export interface ControllerMetrics {
  /** Reconcile calls that finished (in any way). */
  reconciles: number;
  /** Reconciles that failed and were retried with backoff. */
  errors: number;
  /** Requeues asked for: `requeueAfterMs` results and NotYetErrors. */
  requeues: number;
  /** Keys given up on with a TerminalError. */
  terminal: number;
}

export interface Controller<K extends string = string> {
  readonly name: string;
  /** Start the workers; aborting `signal` stops the controller. Starting twice is an error. */
  start(signal?: AbortSignal): void;
  enqueue(key: K): void;
  enqueueAfter(key: K, ms: number): void;
  /** Stop handing out keys, abort reconciles' signals, and wait for in-flight reconciles. */
  stop(): Promise<void>;
  metrics(): ControllerMetrics;
  /** Keys waiting (for tests and health reports). */
  queueLength(): number;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function createController<K extends string = string>(options: ControllerOptions<K>): Controller<K> {
  const workers = options.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1) {
    throw new RangeError(`controller ${options.name}: workers must be a positive integer`);
  }
  const clock = options.clock ?? systemClock;
  const logger = (options.logger ?? rootLogger).child({ controller: options.name });
  const queue: WorkQueue<K> = createWorkQueue<K>({ clock, backoff: createBackoff(options.backoff) });
  const stopping = new AbortController();
  const metrics: ControllerMetrics = { reconciles: 0, errors: 0, requeues: 0, terminal: 0 };
  let running: Promise<void> | undefined;

  async function processKey(key: K): Promise<void> {
    const failures = queue.numRequeues(key);
    const context: ReconcileContext = {
      signal: stopping.signal,
      logger: logger.child({ key }),
      failures,
    };
    try {
      const result: Result | undefined = (await options.reconcile(key, context)) ?? undefined;
      metrics.reconciles++;
      queue.forget(key);
      const after = result?.requeueAfterMs;
      if (after !== undefined) {
        metrics.requeues++;
        queue.addAfter(key, after);
      }
    } catch (error) {
      metrics.reconciles++;
      if (error instanceof NotYetError) {
        metrics.requeues++;
        queue.forget(key);
        context.logger.debug("not yet; requeueing", {
          reason: error.message,
          requeueAfterMs: error.requeueAfterMs,
        });
        queue.addAfter(key, error.requeueAfterMs);
      } else if (error instanceof TerminalError) {
        metrics.terminal++;
        queue.forget(key);
        context.logger.warn("reconcile failed terminally; not retrying", { error: error.message });
      } else if (stopping.signal.aborted) {
        // Aborted by stop(): not a failure worth a retry or a warning.
        context.logger.debug("reconcile interrupted by shutdown", { error: messageOf(error) });
      } else {
        metrics.errors++;
        queue.addRateLimited(key);
        context.logger.warn("reconcile failed; retrying with backoff", {
          error: messageOf(error),
          attempt: failures + 1,
        });
      }
    } finally {
      queue.done(key);
    }
  }

  async function worker(): Promise<void> {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      await processKey(key);
    }
  }

  const controller: Controller<K> = {
    name: options.name,
    start(signal) {
      if (running) throw new Error(`controller ${options.name} already started`);
      if (stopping.signal.aborted) throw new Error(`controller ${options.name} was stopped`);
      running = Promise.all(Array.from({ length: workers }, () => worker())).then(() => undefined);
      if (signal) {
        if (signal.aborted) void controller.stop();
        else signal.addEventListener("abort", () => void controller.stop(), { once: true });
      }
      logger.debug("controller started", { workers });
    },
    enqueue: (key) => queue.add(key),
    enqueueAfter: (key, ms) => queue.addAfter(key, ms),
    async stop() {
      if (!stopping.signal.aborted) {
        stopping.abort();
        queue.shutDown();
        logger.debug("controller stopping");
      }
      await running;
    },
    metrics: () => ({ ...metrics }),
    queueLength: () => queue.len(),
  };
  return controller;
}
