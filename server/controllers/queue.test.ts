import { describe, expect, it } from "vitest";
import { createBackoff } from "./backoff";
import { FakeClock } from "./clock";
import { createWorkQueue } from "./queue";

function setup() {
  const clock = new FakeClock(0);
  const queue = createWorkQueue({
    clock,
    backoff: createBackoff({ baseMs: 100, maxMs: 1_000, random: () => 0.5 }),
  });
  return { clock, queue };
}

/** Keys handed out without waiting, marking each done. */
async function drain(queue: ReturnType<typeof setup>["queue"]): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) {
    const key = await queue.get();
    if (key === undefined) break;
    keys.push(key);
    queue.done(key);
  }
  return keys;
}

describe("work queue", () => {
  it("hands keys out in order and deduplicates waiting keys", async () => {
    const { queue } = setup();
    for (const key of ["a", "b", "a", "c", "b"]) queue.add(key);
    expect(queue.len()).toBe(3);
    expect(await drain(queue)).toEqual(["a", "b", "c"]);
  });

  it("never hands out a key being processed; re-adding it marks it dirty for one more run", async () => {
    const { queue } = setup();
    queue.add("a");
    const first = await queue.get();
    expect(first).toBe("a");
    queue.add("a");
    queue.add("a");
    expect(queue.len()).toBe(0);
    queue.add("b");
    expect(await queue.get()).toBe("b");
    queue.done("b");
    queue.done("a");
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toBe("a");
    queue.done("a");
    expect(queue.len()).toBe(0);
    expect(queue.processingCount()).toBe(0);
  });

  it("wakes a waiting get() on add", async () => {
    const { queue } = setup();
    const waiting = queue.get();
    queue.add("x");
    expect(await waiting).toBe("x");
    expect(queue.processingCount()).toBe(1);
  });

  it("addAfter adds when due, keeping only the earliest time per key", async () => {
    const { clock, queue } = setup();
    queue.addAfter("a", 100);
    queue.addAfter("a", 50);
    queue.addAfter("a", 200);
    queue.addAfter("b", 70);
    expect(queue.delayedCount()).toBe(2);
    clock.advance(49);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(queue.len()).toBe(1);
    clock.advance(20);
    expect(await drain(queue)).toEqual(["a", "b"]);
    clock.advance(1_000);
    expect(queue.len()).toBe(0);
    expect(queue.delayedCount()).toBe(0);
  });

  it("addAfter with no delay adds at once, and a due delayed add of a waiting key is deduplicated", () => {
    const { clock, queue } = setup();
    queue.addAfter("a", 0);
    expect(queue.len()).toBe(1);
    queue.addAfter("a", 10);
    clock.advance(10);
    expect(queue.len()).toBe(1);
  });

  it("addRateLimited backs off exponentially per key until forget", async () => {
    const { clock, queue } = setup();
    // random 0.5: delays 50, 100, 200 … for attempts 0, 1, 2.
    const dueAfter = async (key: string) => {
      queue.addRateLimited(key);
      let elapsed = 0;
      while (queue.len() === 0 && elapsed < 10_000) {
        clock.advance(1);
        elapsed++;
      }
      const got = await queue.get();
      if (got) queue.done(got);
      return elapsed;
    };
    expect(await dueAfter("a")).toBe(50);
    expect(await dueAfter("a")).toBe(100);
    expect(await dueAfter("a")).toBe(200);
    expect(queue.numRequeues("a")).toBe(3);
    queue.forget("a");
    expect(queue.numRequeues("a")).toBe(0);
    expect(await dueAfter("a")).toBe(50);
  });

  it("shutDown resolves waiting and later get() calls with undefined and drops everything queued", async () => {
    const { clock, queue } = setup();
    const waiting = queue.get();
    queue.shutDown();
    expect(await waiting).toBeUndefined();

    const other = setup();
    other.queue.add("a");
    other.queue.addAfter("b", 10);
    other.queue.shutDown();
    expect(other.queue.len()).toBe(0);
    expect(other.queue.delayedCount()).toBe(0);
    expect(await other.queue.get()).toBeUndefined();
    other.queue.add("c");
    expect(other.queue.len()).toBe(0);
    expect(other.queue.isShuttingDown()).toBe(true);
    clock.advance(100);
    expect(await queue.get()).toBeUndefined();
  });

  it("lets a key in flight at shutdown be done without queueing it again", async () => {
    const { queue } = setup();
    queue.add("a");
    await queue.get();
    queue.add("a");
    queue.shutDown();
    queue.done("a");
    expect(queue.len()).toBe(0);
    expect(queue.processingCount()).toBe(0);
  });

  it("with N concurrent workers, processes every key and never one key twice at once", async () => {
    const { queue } = setup();
    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
    const active = new Set<string>();
    const runs = new Map<string, number>();
    let maxParallel = 0;
    let overlaps = 0;
    const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

    const worker = async () => {
      for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
        if (active.has(key)) overlaps++;
        active.add(key);
        maxParallel = Math.max(maxParallel, active.size);
        runs.set(key, (runs.get(key) ?? 0) + 1);
        await pause();
        // Re-adding while processing: the key must run once more, later, not concurrently.
        if ((runs.get(key) ?? 0) === 1) queue.add(key);
        await pause();
        active.delete(key);
        queue.done(key);
      }
    };
    const workers = Array.from({ length: 5 }, () => worker());
    for (const key of keys) queue.add(key);
    for (const key of keys) queue.add(key);
    for (let i = 0; i < 200 && (queue.len() > 0 || queue.processingCount() > 0); i++) await pause();
    queue.shutDown();
    await Promise.all(workers);

    expect(overlaps).toBe(0);
    expect(maxParallel).toBe(5);
    expect([...runs.values()].every((count) => count === 2)).toBe(true);
    expect(runs.size).toBe(20);
  });
});
