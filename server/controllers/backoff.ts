/**
 * Per-key exponential backoff with full jitter (AWS's "full jitter": a uniform delay between 0 and
 * the exponential ceiling), so many failing keys do not retry in lockstep. Success resets a key.
 */
export interface BackoffOptions {
  /** Ceiling of the first retry's delay. */
  baseMs?: number;
  /** Largest ceiling. */
  maxMs?: number;
  /** Uniform in [0, 1); injectable for tests. */
  random?: () => number;
}

export interface KeyedBackoff {
  /** The delay before the next retry of `key`; counts the attempt. */
  next(key: string): number;
  /** Failures counted for `key` since it last succeeded. */
  attempts(key: string): number;
  /** Forget `key`'s failures (after a success or when giving up). */
  reset(key: string): void;
}

export const DEFAULT_BACKOFF_BASE_MS = 50;
export const DEFAULT_BACKOFF_MAX_MS = 5 * 60_000;

/** The ceiling for retry number `attempt` (0-based): base·2^attempt, capped at max. */
export function backoffCeiling(attempt: number, baseMs: number, maxMs: number): number {
  // Cap the exponent so 2 ** attempt never overflows to Infinity.
  return Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 52));
}

export function createBackoff(options: BackoffOptions = {}): KeyedBackoff {
  const baseMs = options.baseMs ?? DEFAULT_BACKOFF_BASE_MS;
  const maxMs = options.maxMs ?? DEFAULT_BACKOFF_MAX_MS;
  const random = options.random ?? Math.random;
  if (!(baseMs > 0) || !(maxMs >= baseMs)) {
    throw new RangeError(`backoff needs 0 < baseMs <= maxMs (got ${baseMs}, ${maxMs})`);
  }
  const failures = new Map<string, number>();
  return {
    next(key) {
      const attempt = failures.get(key) ?? 0;
      failures.set(key, attempt + 1);
      return Math.floor(random() * backoffCeiling(attempt, baseMs, maxMs));
    },
    attempts: (key) => failures.get(key) ?? 0,
    reset(key) {
      failures.delete(key);
    },
  };
}
