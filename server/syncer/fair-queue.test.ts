import { describe, expect, it } from "vitest";
import { FakeClock } from "@/server/controllers/clock";
import type { FairQueue } from "./contracts";
import { createFairQueue } from "./fair-queue";

function setup<T = string>(defaultWeight?: number) {
  const clock = new FakeClock(0);
  const queue = createFairQueue<T>({ clock, defaultWeight });
  return { clock, queue };
}

/** Tenants of the next `picks` items (each available without waiting). */
async function take<T>(queue: FairQueue<T>, picks: number): Promise<{ tenant: string; item: T }[]> {
  const served: { tenant: string; item: T }[] = [];
  for (let i = 0; i < picks; i++) {
    const next = await queue.next();
    if (!next) break;
    served.push(next);
  }
  return served;
}

/** Whether `promise` has settled once pending callbacks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

function count(served: { tenant: string }[], tenant: string): number {
  return served.filter((entry) => entry.tenant === tenant).length;
}

describe("fair queue", () => {
  it("serves busy tenants in proportion to their weights (1:3)", async () => {
    const { queue } = setup();
    queue.setWeight("light", 1);
    queue.setWeight("heavy", 3);
    for (let i = 0; i < 4_000; i++) {
      queue.add("light", `l${i}`);
      queue.add("heavy", `h${i}`);
    }
    const served = await take(queue, 4_000);
    expect(count(served, "light")).toBe(1_000);
    expect(count(served, "heavy")).toBe(3_000);
    // Evenly spread, not in bursts: every window of 4 picks serves each tenant by its weight.
    for (let start = 0; start < 400; start += 4) {
      expect(count(served.slice(start, start + 4), "light")).toBe(1);
    }
  });

  it("keeps FIFO order within a tenant", async () => {
    const { queue } = setup();
    for (const item of ["a", "b", "c"]) queue.add("acme", item);
    expect((await take(queue, 3)).map((entry) => entry.item)).toEqual(["a", "b", "c"]);
  });

  it("does not let a tenant with 10 000 items starve one with 10 (equal weights)", async () => {
    const { queue } = setup();
    for (let i = 0; i < 10_000; i++) queue.add("noisy", `pod-${i}`);
    for (let i = 0; i < 10; i++) queue.add("quiet", `pod-${i}`);
    const served = await take(queue, 20);
    expect(count(served, "quiet")).toBe(10);
  });

  it("serves a weight-1 tenant's 10 items within 10 × 101 picks against a weight-100 tenant", async () => {
    const { queue } = setup();
    queue.setWeight("noisy", 100);
    queue.setWeight("quiet", 1);
    for (let i = 0; i < 10_000; i++) queue.add("noisy", `pod-${i}`);
    for (let i = 0; i < 10; i++) queue.add("quiet", `pod-${i}`);
    const served = await take(queue, 10 * 101);
    expect(count(served, "quiet")).toBe(10);
  });

  it("serves a tenant arriving late promptly, with no credit saved up by the busy one", async () => {
    const { queue } = setup();
    for (let i = 0; i < 1_000; i++) queue.add("noisy", `pod-${i}`);
    await take(queue, 500);
    queue.add("late", "pod-0");
    const served = await take(queue, 2);
    expect(count(served, "late")).toBe(1);
  });

  it("waits when empty and hands out an item added later", async () => {
    const { queue } = setup();
    const next = queue.next();
    expect(await settled(next)).toBe(false);
    queue.add("acme", "default/web");
    expect(await next).toEqual({ tenant: "acme", item: "default/web" });
  });

  it("holds a paused tenant's items while others proceed, and serves them on resume", async () => {
    const { queue } = setup();
    queue.pause("acme");
    queue.add("acme", "a1");
    queue.add("globex", "g1");
    queue.add("acme", "a2");
    expect(await queue.next()).toEqual({ tenant: "globex", item: "g1" });
    const waiting = queue.next();
    expect(await settled(waiting)).toBe(false);
    expect(queue.stats().acme).toMatchObject({ depth: 2, paused: true });
    queue.resume("acme");
    expect(await waiting).toEqual({ tenant: "acme", item: "a1" });
    expect(await queue.next()).toEqual({ tenant: "acme", item: "a2" });
    expect(queue.stats().acme).toMatchObject({ depth: 0, paused: false });
  });

  it("de-duplicates string keys waiting in a tenant's queue, but not across tenants or once served", async () => {
    const { queue } = setup();
    queue.add("acme", "default/web");
    queue.add("acme", "default/web");
    queue.add("globex", "default/web");
    expect(queue.stats().acme!.depth).toBe(1);
    expect(queue.stats().globex!.depth).toBe(1);
    await take(queue, 2);
    queue.add("acme", "default/web");
    expect(queue.stats().acme!.depth).toBe(1);
  });

  it("queues every non-string item as given", () => {
    const { queue } = setup<{ key: string }>();
    queue.add("acme", { key: "default/web" });
    queue.add("acme", { key: "default/web" });
    expect(queue.stats().acme!.depth).toBe(2);
  });

  it("reports depth, oldest item age, items served, weight and paused per tenant", async () => {
    const { clock, queue } = setup(20);
    queue.add("acme", "a1");
    clock.advance(1_500);
    queue.add("acme", "a2");
    queue.add("globex", "g1");
    queue.setWeight("globex", 5);
    clock.advance(500);
    expect(queue.stats()).toEqual({
      acme: { depth: 2, oldestAgeMs: 2_000, served: 0, weight: 20, paused: false },
      globex: { depth: 1, oldestAgeMs: 500, served: 0, weight: 5, paused: false },
    });
    await take(queue, 3);
    expect(queue.stats()).toEqual({
      acme: { depth: 0, oldestAgeMs: 0, served: 2, weight: 20, paused: false },
      globex: { depth: 0, oldestAgeMs: 0, served: 1, weight: 5, paused: false },
    });
  });

  it("clamps weights to 1..100", () => {
    const { queue } = setup();
    queue.setWeight("a", 0);
    queue.setWeight("b", 1_000);
    queue.setWeight("c", Number.NaN);
    const stats = queue.stats();
    expect([stats.a!.weight, stats.b!.weight, stats.c!.weight]).toEqual([1, 100, 10]);
  });

  it("drops a removed tenant's items and statistics", async () => {
    const { queue } = setup();
    queue.add("acme", "a1");
    queue.add("globex", "g1");
    queue.removeTenant("acme");
    expect(Object.keys(queue.stats())).toEqual(["globex"]);
    expect(await queue.next()).toEqual({ tenant: "globex", item: "g1" });
    expect(await settled(queue.next())).toBe(false);
  });

  it("resolves waiting and later next() calls with null after shutdown", async () => {
    const { queue } = setup();
    const waiting = [queue.next(), queue.next()];
    queue.shutdown();
    expect(await Promise.all(waiting)).toEqual([null, null]);
    queue.add("acme", "a1");
    expect(await queue.next()).toBeNull();
    expect(queue.stats()).toEqual({});
  });
});
