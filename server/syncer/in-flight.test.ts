import { describe, expect, it } from "vitest";
import { createInFlightKeys, retryDelayMs } from "./in-flight";

describe("keys in flight", () => {
  it("queues a change right away when its key is not being reconciled", () => {
    const keys = createInFlightKeys();
    expect(keys.offer("a|pod|team|web")).toBe(true);
    expect(keys.offer("a|pod|team|web")).toBe(true);
  });

  it("holds a change that arrives during the key's reconcile and hands it back when it ends", () => {
    const keys = createInFlightKeys();
    keys.begin("k");
    expect(keys.offer("k")).toBe(false);
    expect(keys.offer("k")).toBe(false);
    expect(keys.offer("other")).toBe(true);
    // Two changes meanwhile make one more reconcile, not two.
    expect(keys.finish("k")).toBe(true);
    expect(keys.offer("k")).toBe(true);
    keys.begin("k");
    expect(keys.finish("k")).toBe(false);
  });

  it("does not requeue a key nothing changed during its reconcile", () => {
    const keys = createInFlightKeys();
    keys.begin("k");
    expect(keys.finish("k")).toBe(false);
  });

  it("counts failures in a row per key and forgets them on success", () => {
    const keys = createInFlightKeys();
    expect(keys.failed("k")).toBe(1);
    expect(keys.failed("k")).toBe(2);
    expect(keys.failed("other")).toBe(1);
    keys.succeeded("k");
    expect(keys.failed("k")).toBe(1);
    expect(keys.failed("other")).toBe(2);
  });

  it("forgets everything on clear (a stopped syncer starts afresh)", () => {
    const keys = createInFlightKeys();
    keys.begin("k");
    keys.offer("k");
    keys.failed("k");
    keys.clear();
    expect(keys.offer("k")).toBe(true);
    expect(keys.finish("k")).toBe(false);
    expect(keys.failed("k")).toBe(1);
  });
});

describe("retry delays", () => {
  it("start at 250 ms and double with each failure in a row", () => {
    expect([1, 2, 3, 4, 5].map(retryDelayMs)).toEqual([250, 500, 1_000, 2_000, 4_000]);
  });

  it("never exceed 30 s, however many failures", () => {
    expect(retryDelayMs(8)).toBe(30_000);
    expect(retryDelayMs(11)).toBe(30_000);
    expect(retryDelayMs(10_000)).toBe(30_000);
  });

  it("treat a nonsensical attempt as the first", () => {
    expect(retryDelayMs(0)).toBe(250);
    expect(retryDelayMs(-3)).toBe(250);
  });
});
