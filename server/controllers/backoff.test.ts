import { describe, expect, it } from "vitest";
import { backoffCeiling, createBackoff } from "./backoff";

describe("backoff", () => {
  it("doubles the ceiling per attempt up to the max", () => {
    expect([0, 1, 2, 3, 4, 5].map((attempt) => backoffCeiling(attempt, 10, 100))).toEqual([
      10, 20, 40, 80, 100, 100,
    ]);
    expect(backoffCeiling(10_000, 10, 100)).toBe(100);
  });

  it("draws a full-jitter delay in [0, ceiling) and counts attempts per key", () => {
    const draws = [0.5, 0.5, 0.999, 0];
    const backoff = createBackoff({ baseMs: 100, maxMs: 1_000, random: () => draws.shift() ?? 0 });
    expect(backoff.next("a")).toBe(50);
    expect(backoff.next("a")).toBe(100);
    expect(backoff.next("a")).toBe(399);
    expect(backoff.attempts("a")).toBe(3);
    expect(backoff.next("b")).toBe(0);
    expect(backoff.attempts("b")).toBe(1);
  });

  it("never exceeds the max, however many attempts", () => {
    const backoff = createBackoff({ baseMs: 5, maxMs: 1_000, random: () => 0.9999999 });
    for (let i = 0; i < 2_000; i++) expect(backoff.next("k")).toBeLessThan(1_000);
  });

  it("starts over after a reset", () => {
    const backoff = createBackoff({ baseMs: 100, maxMs: 10_000, random: () => 0.5 });
    backoff.next("k");
    backoff.next("k");
    backoff.reset("k");
    expect(backoff.attempts("k")).toBe(0);
    expect(backoff.next("k")).toBe(50);
  });

  it("rejects nonsensical bounds", () => {
    expect(() => createBackoff({ baseMs: 0 })).toThrow(RangeError);
    expect(() => createBackoff({ baseMs: 100, maxMs: 10 })).toThrow(RangeError);
  });
});
