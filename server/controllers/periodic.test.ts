import { describe, expect, it } from "vitest";
import { runPeriodically } from "./periodic";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("runPeriodically", () => {
  it("never overlaps rounds longer than its interval, and reports a failing round and goes on", async () => {
    let running = 0;
    let overlapped = false;
    let rounds = 0;
    const errors: unknown[] = [];
    const loop = runPeriodically(
      1,
      async () => {
        running++;
        overlapped ||= running > 1;
        rounds++;
        await sleep(15);
        running--;
        if (rounds === 2) throw new Error("round 2 failed");
      },
      (error) => errors.push(error),
    );
    while (rounds < 4) await sleep(5);
    await loop.stop();
    expect(overlapped).toBe(false);
    expect(errors.map(String)).toEqual(["Error: round 2 failed"]);
  });

  it("stop waits for the round under way, and no round starts after it", async () => {
    let running = false;
    let rounds = 0;
    const loop = runPeriodically(
      1,
      async () => {
        running = true;
        rounds++;
        await sleep(40);
        running = false;
      },
      () => {},
    );
    while (!running) await sleep(2);
    await loop.stop();
    // The round that was under way when stop was called has finished by now…
    expect(running).toBe(false);
    const after = rounds;
    await sleep(30);
    // …and none started since.
    expect(rounds).toBe(after);
  });
});
