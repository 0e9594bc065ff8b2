import { describe, expect, it } from "vitest";
import { createConcurrencyLimiter, createRateLimiter, createSampler } from "./rate-limit";

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
