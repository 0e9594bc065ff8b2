/**
 * Per-token limits of the gateway: a token bucket for request rate (a watch or an exec session
 * costs one request, at its start) and a cap on concurrent long-running requests. The clock is
 * injected so tests move time by hand.
 */

export interface RateLimitOptions {
  /** Sustained requests per second per key. */
  ratePerSecond: number;
  /** Requests a key may make at once after being idle. */
  burst: number;
  now?: () => number;
  /** Buckets kept before full (idle) ones are forgotten. */
  maxKeys?: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export function createRateLimiter({
  ratePerSecond,
  burst,
  now = Date.now,
  maxKeys = 10_000,
}: RateLimitOptions) {
  const buckets = new Map<string, { tokens: number; at: number }>();

  function refill(bucket: { tokens: number; at: number }, at: number) {
    const elapsed = Math.max(0, at - bucket.at) / 1000;
    bucket.tokens = Math.min(burst, bucket.tokens + elapsed * ratePerSecond);
    bucket.at = at;
  }

  function forgetIdle(at: number) {
    for (const [key, bucket] of buckets) {
      refill(bucket, at);
      if (bucket.tokens >= burst) buckets.delete(key);
    }
  }

  return {
    take(key: string): RateDecision {
      const at = now();
      let bucket = buckets.get(key);
      if (!bucket) {
        if (buckets.size >= maxKeys) forgetIdle(at);
        bucket = { tokens: burst, at };
        buckets.set(key, bucket);
      }
      refill(bucket, at);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true };
      }
      const seconds = (1 - bucket.tokens) / ratePerSecond;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(seconds)) };
    },
    size: () => buckets.size,
  };
}

/** At most `max` concurrent holders per key; `acquire` gives a release function or null. */
export function createConcurrencyLimiter(max: number) {
  const held = new Map<string, number>();
  return {
    acquire(key: string): (() => void) | null {
      const current = held.get(key) ?? 0;
      if (current >= max) return null;
      held.set(key, current + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (held.get(key) ?? 1) - 1;
        if (left <= 0) held.delete(key);
        else held.set(key, left);
      };
    },
    count: (key: string) => held.get(key) ?? 0,
  };
}

/**
 * At most one event per key per window; the rest are counted and reported with the next one, so
 * a flood of denials costs one audit row a minute rather than one each.
 */
export function createSampler({
  windowMs,
  now = Date.now,
  maxKeys = 10_000,
}: {
  windowMs: number;
  now?: () => number;
  maxKeys?: number;
}) {
  const last = new Map<string, { at: number; suppressed: number }>();
  return {
    /** null: suppress this one; otherwise how many were suppressed since the last one let through. */
    admit(key: string): { suppressed: number } | null {
      const at = now();
      const entry = last.get(key);
      if (entry && at - entry.at < windowMs) {
        entry.suppressed += 1;
        return null;
      }
      if (!entry && last.size >= maxKeys) {
        for (const [other, value] of last) if (at - value.at >= windowMs) last.delete(other);
        if (last.size >= maxKeys) return null;
      }
      last.set(key, { at, suppressed: 0 });
      return { suppressed: entry?.suppressed ?? 0 };
    },
  };
}
