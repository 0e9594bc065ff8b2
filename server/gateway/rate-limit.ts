/**
 * Limits of the gateway: per token, a token bucket for request rate (a watch or an exec session
 * costs one request, at its start) and a cap on concurrent long-running requests; per source
 * address and per presented token, a budget of failed authentications. The clock is injected so
 * tests move time by hand.
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

  function decision(bucket: { tokens: number }): RateDecision {
    if (bucket.tokens >= 1) return { allowed: true };
    const seconds = (1 - bucket.tokens) / ratePerSecond;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(seconds)) };
  }

  return {
    take(key: string): RateDecision {
      const at = now();
      let bucket = buckets.get(key);
      if (!bucket) {
        if (buckets.size >= maxKeys) forgetIdle(at);
        // Still full of busy keys (a flood from many addresses): memory stays bounded, the oldest goes.
        if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value as string);
        bucket = { tokens: burst, at };
        buckets.set(key, bucket);
      }
      refill(bucket, at);
      const taken = decision(bucket);
      if (taken.allowed) bucket.tokens -= 1;
      return taken;
    },
    /** What `take` would answer now, without taking (a key never seen is allowed). */
    peek(key: string): RateDecision {
      const bucket = buckets.get(key);
      if (!bucket) return { allowed: true };
      refill(bucket, now());
      return decision(bucket);
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

export interface AuthFailureLimitOptions {
  /** Failed authentications allowed per source address, and per presented token, a minute. */
  failuresPerMinute: number;
  /** How long a token that verified stays exempt from its address's budget (default 15 min). */
  trustedForMs?: number;
  now?: () => number;
  maxKeys?: number;
  /** Failed lookups a second, all callers together (default 20, bursts of 5 s). */
  failedLookupsPerSecond?: number;
}

/**
 * Failed authentications at the gateway (a token that is unknown, revoked, expired or whose owner
 * left). Each costs a database read, so past a budget per presented token (a revoked token retried
 * by a script, counted by its hash) and per source address and token prefix, the caller is refused
 * with 429 before its token is looked up; all failed lookups together are capped too. Keying the
 * address budget by prefix means one bad client behind a shared address (this host, a NAT, a
 * TLS-terminating proxy) does not lock out its neighbours, whose tokens have other prefixes; only
 * forging a victim's prefix (shown to that tenant's admins) from the victim's own address would. A
 * token that verified lately is never held back by the address budget; successes are never
 * counted.
 */
export function createAuthFailureLimiter({
  failuresPerMinute,
  trustedForMs = 15 * 60 * 1000,
  now = Date.now,
  maxKeys = 10_000,
  failedLookupsPerSecond = 20,
}: AuthFailureLimitOptions) {
  const budget = { ratePerSecond: failuresPerMinute / 60, burst: failuresPerMinute, now, maxKeys };
  // Per token (its hash), and per source address with the token's public prefix: one client
  // repeating bad tokens is held back, while a neighbour behind the same address (everyone, on
  // this host or behind a proxy) with tokens of other prefixes is not.
  const byToken = createRateLimiter(budget);
  const byAddressAndPrefix = createRateLimiter(budget);
  // All failed lookups together: a spray of distinct made-up tokens costs the database at most this.
  const lookups = createRateLimiter({
    ratePerSecond: failedLookupsPerSecond,
    burst: failedLookupsPerSecond * 5,
    now,
    maxKeys: 1,
  });
  const trusted = new Map<string, number>();
  const isTrusted = (token: string) => {
    const at = trusted.get(token);
    return at !== undefined && now() - at < trustedForMs;
  };
  const pairKey = (address: string, prefix: string | null) => `${address} ${prefix ?? "-"}`;

  return {
    /** The 429 to answer before looking `token` (its hash) up, or null to go on. */
    refusal(
      address: string,
      token: string | null,
      prefix: string | null = null,
    ): { retryAfterSeconds: number } | null {
      if (token !== null) {
        const mine = byToken.peek(token);
        if (!mine.allowed) return { retryAfterSeconds: mine.retryAfterSeconds };
        if (isTrusted(token)) return null;
      }
      for (const limiter of [byAddressAndPrefix.peek(pairKey(address, prefix)), lookups.peek("all")]) {
        if (!limiter.allowed) return { retryAfterSeconds: limiter.retryAfterSeconds };
      }
      return null;
    },
    failed(address: string, token: string | null, prefix: string | null = null): void {
      byAddressAndPrefix.take(pairKey(address, prefix));
      lookups.take("all");
      if (token !== null) {
        byToken.take(token);
        trusted.delete(token);
      }
    },
    succeeded(token: string): void {
      trusted.delete(token);
      trusted.set(token, now());
      if (trusted.size > maxKeys) trusted.delete(trusted.keys().next().value as string);
    },
  };
}
