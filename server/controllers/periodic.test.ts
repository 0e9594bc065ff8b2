import { describe, expect, it } from "vitest";
import { runPeriodically } from "./periodic";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("runPeriodically", () => {
  it("never overlaps rounds, reports a failing round and goes on, and stop waits for the round under way", async () => {
    let running = 0;
    let overlapped = false;
    let rounds = 0;
    const errors: unknown[] = [];
    let finished = false;
    const loop = runPeriodically(
      1,
      async () => {
        running++;
        overlapped ||= running > 1;
        rounds++;
        await sleep(10);
        running--;
        if (rounds === 2) throw new Error("round 2 failed");
        finished = true;
      },
      (error) => errors.push(error),
    );
    while (rounds < 4) await sleep(5);
    finished = false;
    await loop.stop();
    const after = rounds;
    await sleep(30);
    expect(overlapped).toBe(false);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toContain("round 2 failed");
    expect(rounds).toBe(after);
    // A round that had started when stop was called had finished by the time stop resolved.
    expect(running).toBe(0);
    expect(finished || rounds === after).toBe(true);
  });
});
