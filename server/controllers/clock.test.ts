import { describe, expect, it } from "vitest";
import { FakeClock } from "./clock";

describe("FakeClock", () => {
  it("fires due timers in time order, with now() at each timer's due time", () => {
    const clock = new FakeClock(1_000);
    const fired: string[] = [];
    clock.setTimer(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimer(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimer(() => fired.push(`c@${clock.now()}`), 20);
    clock.setTimer(() => fired.push("late"), 31);
    clock.advance(30);
    expect(fired).toEqual(["a@1010", "b@1020", "c@1020"]);
    expect(clock.now()).toBe(1_030);
    expect(clock.pendingTimers()).toBe(1);
  });

  it("fires timers set by a firing timer when they fall due within the same advance", () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.setTimer(() => {
      fired.push(clock.now());
      clock.setTimer(() => fired.push(clock.now()), 5);
    }, 5);
    clock.advance(10);
    expect(fired).toEqual([5, 10]);
  });

  it("cancels timers", () => {
    const clock = new FakeClock();
    let fired = false;
    const cancel = clock.setTimer(() => {
      fired = true;
    }, 5);
    cancel();
    clock.advance(10);
    expect(fired).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("sleep resolves when time passes, or at once when the signal aborts", async () => {
    const clock = new FakeClock();
    let slept = false;
    const sleeping = clock.sleep(100).then(() => {
      slept = true;
    });
    await clock.tick(99);
    expect(slept).toBe(false);
    await clock.tick(1);
    await sleeping;
    expect(slept).toBe(true);

    const abort = new AbortController();
    const aborted = clock.sleep(1_000_000, abort.signal);
    abort.abort();
    await aborted;
    expect(clock.pendingTimers()).toBe(0);
    await clock.sleep(5, abort.signal);
  });
});
