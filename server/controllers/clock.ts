/**
 * Time for controllers, behind an interface so queues, backoff and leader election are tested with a
 * fake clock instead of real waits.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or as soon as `signal` aborts (it never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fn` once after `ms`; the returned function cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
}

function sleepWith(clock: Pick<Clock, "setTimer">, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const finish = () => {
      cancel();
      signal?.removeEventListener("abort", finish);
      resolve();
    };
    const cancel = clock.setTimer(finish, ms);
    signal?.addEventListener("abort", finish, { once: true });
  });
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(timer);
  },
  sleep(ms, signal) {
    return sleepWith(systemClock, ms, signal);
  },
};

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
}

/** Lets promise callbacks (and the I/O they started with fakes) run before the next timer fires. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * A clock that only moves when told to. `advance` fires due timers in time order (ties in the order
 * they were set), with `now()` equal to each timer's due time while it runs.
 */
export class FakeClock implements Clock {
  private current: number;
  private timers: FakeTimer[] = [];
  private nextId = 1;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const timer: FakeTimer = { id: this.nextId++, at: this.current + Math.max(0, ms), fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((candidate) => candidate !== timer);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Number of timers not yet fired or cancelled. */
  pendingTimers(): number {
    return this.timers.length;
  }

  private takeDue(until: number): FakeTimer | undefined {
    let due: FakeTimer | undefined;
    for (const timer of this.timers) {
      if (timer.at > until) continue;
      if (!due || timer.at < due.at || (timer.at === due.at && timer.id < due.id)) due = timer;
    }
    if (due) this.timers = this.timers.filter((timer) => timer !== due);
    return due;
  }

  /** Move time forward by `ms`, firing every timer that falls due (synchronously). */
  advance(ms: number): void {
    const until = this.current + ms;
    for (let timer = this.takeDue(until); timer; timer = this.takeDue(until)) {
      this.current = Math.max(this.current, timer.at);
      timer.fn();
    }
    this.current = until;
  }

  /**
   * Like `advance`, but lets pending promise work settle before and after each timer, so code that
   * awaits between sleeps (loops over `sleep`) runs as it would in real time.
   */
  async tick(ms: number): Promise<void> {
    const until = this.current + ms;
    await settle();
    for (let timer = this.takeDue(until); timer; timer = this.takeDue(until)) {
      this.current = Math.max(this.current, timer.at);
      timer.fn();
      await settle();
    }
    this.current = until;
    await settle();
  }
}
