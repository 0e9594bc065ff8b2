import { describe, expect, it } from "vitest";
import {
  createAuthFailureLimiter,
  createConcurrencyLimiter,
  createRateLimiter,
  createSampler,
} from "./rate-limit";

function manualClock() {
  let current = 1_000_000;
  return {
    now: () => current,
    advance: (ms: number) => {
      current += ms;
    },
  };
}

describe("createRateLimiter", () => {
  it("allows a burst, then refills at the rate, per key", () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ ratePerSecond: 2, burst: 3, now: clock.now });
    expect([1, 2, 3].map(() => limiter.take("a").allowed)).toEqual([true, true, true]);
    expect(limiter.take("a")).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(limiter.take("b").allowed).toBe(true);
    clock.advance(499);
    expect(limiter.take("a").allowed).toBe(false);
    clock.advance(1);
    expect(limiter.take("a").allowed).toBe(true);
    expect(limiter.take("a").allowed).toBe(false);
    clock.advance(60_000);
    expect([1, 2, 3, 4].map(() => limiter.take("a").allowed)).toEqual([true, true, true, false]);
  });

  it("says how long to wait in whole seconds", () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ ratePerSecond: 0.1, burst: 1, now: clock.now });
    expect(limiter.take("a").allowed).toBe(true);
    expect(limiter.take("a")).toEqual({ allowed: false, retryAfterSeconds: 10 });
    clock.advance(5_000);
    expect(limiter.take("a")).toEqual({ allowed: false, retryAfterSeconds: 5 });
  });

  it("forgets idle keys when it holds too many", () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ ratePerSecond: 1, burst: 1, now: clock.now, maxKeys: 2 });
    limiter.take("a");
    limiter.take("b");
    clock.advance(5_000);
    limiter.take("c");
    expect(limiter.size()).toBe(1);
  });
});

describe("createConcurrencyLimiter", () => {
  it("caps holders per key and releases once", () => {
    const limiter = createConcurrencyLimiter(2);
    const first = limiter.acquire("t");
    const second = limiter.acquire("t");
    expect(first && second).toBeTruthy();
    expect(limiter.acquire("t")).toBeNull();
    expect(limiter.acquire("u")).not.toBeNull();
    first?.();
    first?.();
    expect(limiter.count("t")).toBe(1);
    expect(limiter.acquire("t")).not.toBeNull();
    expect(limiter.acquire("t")).toBeNull();
  });
});

describe("createSampler", () => {
  it("lets one event a window through and counts the rest", () => {
    const clock = manualClock();
    const sampler = createSampler({ windowMs: 60_000, now: clock.now });
    expect(sampler.admit("k")).toEqual({ suppressed: 0 });
    expect(sampler.admit("k")).toBeNull();
    expect(sampler.admit("k")).toBeNull();
    expect(sampler.admit("other")).toEqual({ suppressed: 0 });
    clock.advance(60_000);
    expect(sampler.admit("k")).toEqual({ suppressed: 2 });
  });
});

describe("createRateLimiter.peek", () => {
  it("answers as take would, without taking", () => {
    const clock = manualClock();
    const limiter = createRateLimiter({ ratePerSecond: 1, burst: 1, now: clock.now });
    expect(limiter.peek("a")).toEqual({ allowed: true });
    expect(limiter.size()).toBe(0);
    limiter.take("a");
    expect(limiter.peek("a")).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(limiter.peek("a")).toEqual({ allowed: false, retryAfterSeconds: 1 });
    clock.advance(1_000);
    expect(limiter.peek("a")).toEqual({ allowed: true });
  });

  it("stays bounded when every key is busy", () => {
    const limiter = createRateLimiter({ ratePerSecond: 1, burst: 1, maxKeys: 3 });
    for (const key of ["a", "b", "c", "d", "e"]) limiter.take(key);
    expect(limiter.size()).toBe(3);
  });
});

describe("createAuthFailureLimiter", () => {
  it("refuses an address after its budget of failures, and lets it try again as the budget refills", () => {
    const clock = manualClock();
    const limiter = createAuthFailureLimiter({ failuresPerMinute: 3, now: clock.now });
    for (const token of ["t1", "t2", "t3"]) {
      expect(limiter.refusal("10.0.0.1", token)).toBeNull();
      limiter.failed("10.0.0.1", token);
    }
    expect(limiter.refusal("10.0.0.1", "t4")).toEqual({ retryAfterSeconds: 20 });
    // Another address has its own budget.
    expect(limiter.refusal("10.0.0.2", "t4")).toBeNull();
    clock.advance(20_000);
    expect(limiter.refusal("10.0.0.1", "t4")).toBeNull();
  });

  it("refuses one token retried from many addresses", () => {
    const clock = manualClock();
    const limiter = createAuthFailureLimiter({ failuresPerMinute: 2, now: clock.now });
    limiter.failed("10.0.0.1", "revoked");
    limiter.failed("10.0.0.2", "revoked");
    expect(limiter.refusal("10.0.0.3", "revoked")).toEqual({ retryAfterSeconds: 30 });
    expect(limiter.refusal("10.0.0.3", "other")).toBeNull();
  });

  it("never slows a token that verified lately, even from a refused address (a shared proxy or NAT)", () => {
    const clock = manualClock();
    const limiter = createAuthFailureLimiter({ failuresPerMinute: 2, trustedForMs: 60_000, now: clock.now });
    limiter.succeeded("good");
    for (let i = 0; i < 5; i++) limiter.failed("127.0.0.1", `guess-${i}`);
    expect(limiter.refusal("127.0.0.1", "guess-9")).not.toBeNull();
    expect(limiter.refusal("127.0.0.1", "good")).toBeNull();
    // Trust lapses; and a trusted token that fails (revoked meanwhile) loses it at once.
    clock.advance(60_000);
    for (let i = 0; i < 5; i++) limiter.failed("127.0.0.1", `guess-${i}`);
    expect(limiter.refusal("127.0.0.1", "good")).not.toBeNull();
    limiter.succeeded("good");
    expect(limiter.refusal("127.0.0.1", "good")).toBeNull();
    limiter.failed("127.0.0.1", "good");
    expect(limiter.refusal("127.0.0.1", "good")).not.toBeNull();
  });

  it("holds back a client repeating bad tokens without locking out its neighbours on the same address", () => {
    const clock = manualClock();
    const limiter = createAuthFailureLimiter({ failuresPerMinute: 2, now: clock.now });
    for (let i = 0; i < 3; i++) limiter.failed("127.0.0.1", `guess-${i}`, "r0_attacker");
    expect(limiter.refusal("127.0.0.1", "guess-9", "r0_attacker")).not.toBeNull();
    // A tenant whose token never verified in this process yet (a restart) still gets looked up.
    expect(limiter.refusal("127.0.0.1", "fresh", "r0_someone")).toBeNull();
  });

  it("caps failed lookups of everyone together", () => {
    const clock = manualClock();
    const limiter = createAuthFailureLimiter({
      failuresPerMinute: 1000,
      failedLookupsPerSecond: 2,
      now: clock.now,
    });
    for (let i = 0; i < 10; i++) limiter.failed(`10.0.0.${i}`, `spray-${i}`, `r0_spray${i}`);
    expect(limiter.refusal("10.0.1.1", "another", "r0_another")).not.toBeNull();
    limiter.succeeded("good");
    expect(limiter.refusal("10.0.1.1", "good", "r0_good")).toBeNull();
    clock.advance(1_000);
    expect(limiter.refusal("10.0.1.1", "another", "r0_another")).toBeNull();
  });
});
