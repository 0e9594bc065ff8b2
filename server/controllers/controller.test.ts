import { describe, expect, it } from "vitest";
import type { LogFields, Logger } from "@/server/logger";
import { FakeClock } from "./clock";
import { type ControllerOptions, createController, NotYetError, TerminalError } from "./controller";

interface Record {
  level: string;
  message: string;
  fields: LogFields;
}

function captureLogger(records: Record[], context: LogFields = {}): Logger {
  const at =
    (level: string) =>
    (message: string, fields: LogFields = {}) =>
      void records.push({ level, message, fields: { ...context, ...fields } });
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (fields) => captureLogger(records, { ...context, ...fields }),
  };
}

function setup(reconcile: ControllerOptions["reconcile"], workers = 1) {
  const clock = new FakeClock(0);
  const records: Record[] = [];
  const controller = createController({
    name: "test",
    reconcile,
    workers,
    clock,
    logger: captureLogger(records),
    backoff: { baseMs: 100, maxMs: 1_000, random: () => 0.5 },
  });
  controller.start();
  return { clock, records, controller };
}

describe("controller", () => {
  it("reconciles enqueued keys and counts them", async () => {
    const seen: string[] = [];
    const { clock, controller } = setup(async (key) => {
      seen.push(key);
      return undefined;
    });
    controller.enqueue("a");
    controller.enqueue("b");
    await clock.tick(0);
    expect(seen).toEqual(["a", "b"]);
    expect(controller.metrics()).toEqual({ reconciles: 2, errors: 0, requeues: 0, terminal: 0 });
    await controller.stop();
  });

  it("requeues after requeueAfterMs", async () => {
    const times: number[] = [];
    const { clock, controller } = setup(async () => {
      times.push(clock.now());
      return { requeueAfterMs: 1_000 };
    });
    controller.enqueue("a");
    await clock.tick(2_500);
    expect(times).toEqual([0, 1_000, 2_000]);
    expect(controller.metrics().requeues).toBe(3);
    await controller.stop();
  });

  it("retries errors with exponential backoff, logs a warning with the attempt, and resets on success", async () => {
    const times: number[] = [];
    const failures: number[] = [];
    let fail = 3;
    const { clock, records, controller } = setup(async (_key, context) => {
      times.push(clock.now());
      failures.push(context.failures);
      if (fail-- > 0) throw new Error("boom");
      return undefined;
    });
    controller.enqueue("a");
    await clock.tick(10_000);
    // random 0.5 → 50, 100, 200 ms.
    expect(times).toEqual([0, 50, 150, 350]);
    expect(failures).toEqual([0, 1, 2, 3]);
    expect(controller.metrics()).toEqual({ reconciles: 4, errors: 3, requeues: 0, terminal: 0 });
    const warnings = records.filter((record) => record.level === "warn");
    expect(warnings.map((record) => record.fields.attempt)).toEqual([1, 2, 3]);
    expect(warnings[0]?.fields).toMatchObject({ controller: "test", key: "a", error: "boom" });

    // After a success the next failure starts from the first backoff step again.
    fail = 1;
    times.length = 0;
    controller.enqueue("a");
    await clock.tick(10_000);
    expect(times).toEqual([10_000, 10_050]);
    await controller.stop();
  });

  it("requeues NotYetError quietly after its delay, without backoff", async () => {
    const times: number[] = [];
    let notYet = 2;
    const { clock, records, controller } = setup(async () => {
      times.push(clock.now());
      if (notYet-- > 0) throw new NotYetError("waiting for the apiserver", 300);
      return undefined;
    });
    controller.enqueue("a");
    await clock.tick(5_000);
    expect(times).toEqual([0, 300, 600]);
    expect(controller.metrics()).toEqual({ reconciles: 3, errors: 0, requeues: 2, terminal: 0 });
    expect(records.filter((record) => record.level === "warn")).toEqual([]);
    expect(records.filter((record) => record.message.startsWith("not yet"))).toHaveLength(2);
    await controller.stop();
  });

  it("forgets a key after a TerminalError", async () => {
    let calls = 0;
    const { clock, controller } = setup(async () => {
      calls++;
      throw new TerminalError("spec.version is not supported");
    });
    controller.enqueue("a");
    await clock.tick(60_000);
    expect(calls).toBe(1);
    expect(controller.metrics()).toEqual({ reconciles: 1, errors: 0, requeues: 0, terminal: 1 });
    expect(controller.queueLength()).toBe(0);
    await controller.stop();
  });

  it("runs keys in parallel on N workers but one key only once at a time", async () => {
    const active = new Set<string>();
    let overlaps = 0;
    let maxParallel = 0;
    const releases: (() => void)[] = [];
    const { clock, controller } = setup(async (key) => {
      if (active.has(key)) overlaps++;
      active.add(key);
      maxParallel = Math.max(maxParallel, active.size);
      await new Promise<void>((resolve) => releases.push(resolve));
      active.delete(key);
      return undefined;
    }, 3);
    for (const key of ["a", "b", "c", "d", "a", "a"]) controller.enqueue(key);
    await clock.tick(0);
    expect(active.size).toBe(3);
    controller.enqueue("a");
    for (let i = 0; i < 20 && releases.length > 0; i++) {
      for (const release of releases.splice(0)) release();
      await clock.tick(0);
    }
    expect(overlaps).toBe(0);
    expect(maxParallel).toBe(3);
    // a, b, c, d, then a once more (re-added while it ran).
    expect(controller.metrics().reconciles).toBe(5);
    await controller.stop();
  });

  it("stop() aborts the reconcile signal and waits for in-flight reconciles", async () => {
    let finished = false;
    let release: () => void = () => {};
    const { clock, controller } = setup(async (_key, context) => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      expect(context.signal.aborted).toBe(true);
      finished = true;
      return undefined;
    });
    controller.enqueue("a");
    await clock.tick(0);
    const stopped = controller.stop();
    let stopResolved = false;
    void stopped.then(() => {
      stopResolved = true;
    });
    await clock.tick(0);
    expect(stopResolved).toBe(false);
    release();
    await stopped;
    expect(finished).toBe(true);
    controller.enqueue("b");
    expect(controller.queueLength()).toBe(0);
  });

  it("stops when the start signal aborts", async () => {
    const clock = new FakeClock(0);
    const abort = new AbortController();
    let calls = 0;
    const controller = createController({
      name: "signal",
      clock,
      logger: captureLogger([]),
      reconcile: async () => {
        calls++;
      },
    });
    controller.start(abort.signal);
    abort.abort();
    await controller.stop();
    controller.enqueue("a");
    await clock.tick(0);
    expect(calls).toBe(0);
    expect(() => controller.start()).toThrow(/already started/);
  });
});
