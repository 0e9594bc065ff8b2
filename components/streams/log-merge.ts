/**
 * Several pods' logs merged into one list in timestamp order. Each stream arrives in its own
 * order but at its own pace, so a line is released only once no other stream can still send an
 * earlier one: every other stream has a queued line at or after it, has already sent one at or
 * after it, has been quiet for `graceMs`, or has ended. Past `maxHeld` queued lines everything is
 * released (a stuck stream must not hold memory). A line that still arrives late is released as
 * it comes rather than reordering what is shown. Pure; unit-tested with an injected clock.
 */
import { type LogLine, normalTimestamp } from "@/server/core/stream-protocol";

export interface MergedLine extends LogLine {
  source: number;
}

interface Queued extends MergedLine {
  key: string;
}

interface SourceState {
  queue: Queued[];
  /** Index of the queue's head (entries before it were released). */
  head: number;
  /** Key of the newest line received; later lines from this stream sort at or after it. */
  lastKey: string;
  lastArrival: number;
  ended: boolean;
}

export interface LogMergerOptions {
  graceMs: number;
  maxHeld: number;
}

export class LogMerger {
  private readonly sources: SourceState[];
  private readonly options: LogMergerOptions;
  private held = 0;

  /** `now` starts every stream's quiet time, so each gets `graceMs` to send its first lines. */
  constructor(sourceCount: number, now: number, options: Partial<LogMergerOptions> = {}) {
    this.options = { graceMs: 1_000, maxHeld: 20_000, ...options };
    this.sources = Array.from({ length: sourceCount }, () => ({
      queue: [],
      head: 0,
      lastKey: "",
      lastArrival: now,
      ended: false,
    }));
  }

  /** Lines queued and not yet released. */
  get pending(): number {
    return this.held;
  }

  add(source: number, lines: readonly LogLine[], now: number): void {
    const state = this.sources[source];
    if (!state) throw new RangeError(`no source ${source}`);
    state.lastArrival = now;
    state.ended = false;
    for (const line of lines) {
      // A line without a timestamp sorts with the line before it from the same stream.
      const key = line.ts ? normalTimestamp(line.ts) : state.lastKey;
      if (key > state.lastKey) state.lastKey = key;
      state.queue.push({ ts: line.ts, text: line.text, source, key });
      this.held++;
    }
  }

  /** The stream stopped (closed, failed, waiting to reconnect): it no longer holds others back. */
  end(source: number): void {
    const state = this.sources[source];
    if (state) state.ended = true;
  }

  /** The lines that can be shown now, in timestamp order (ties: by source). */
  drain(now: number): MergedLine[] {
    const released: MergedLine[] = [];
    const force = this.held > this.options.maxHeld;
    for (;;) {
      let best: SourceState | undefined;
      let bestLine: Queued | undefined;
      for (const state of this.sources) {
        const head = state.queue[state.head];
        if (head && (!bestLine || head.key < bestLine.key)) {
          best = state;
          bestLine = head;
        }
      }
      if (!best || !bestLine) break;
      if (!force && !this.releasable(bestLine, best, now)) break;
      released.push({ ts: bestLine.ts, text: bestLine.text, source: bestLine.source });
      best.head++;
      this.held--;
      if (best.head === best.queue.length) {
        best.queue = [];
        best.head = 0;
      } else if (best.head > 4096 && best.head * 2 > best.queue.length) {
        best.queue = best.queue.slice(best.head);
        best.head = 0;
      }
    }
    return released;
  }

  /** When the held lines would next become releasable by quiet time alone (for a timer). */
  nextRelease(): number | undefined {
    if (this.held === 0) return undefined;
    let earliest: number | undefined;
    for (const state of this.sources) {
      if (state.ended || state.queue.length > state.head) continue;
      const at = state.lastArrival + this.options.graceMs;
      if (earliest === undefined || at < earliest) earliest = at;
    }
    return earliest;
  }

  private releasable(line: Queued, from: SourceState, now: number): boolean {
    for (const other of this.sources) {
      if (other === from || other.ended) continue;
      // A queued head sorts at or after `line` (line is the smallest head).
      if (other.queue.length > other.head) continue;
      if (other.lastKey !== "" && other.lastKey >= line.key) continue;
      if (now - other.lastArrival >= this.options.graceMs) continue;
      return false;
    }
    return true;
  }
}
