/**
 * The lines a log view holds: a ring buffer bounded by a line count and a character budget, so a
 * stream of a million lines keeps memory flat. Lines get a sequence number that never repeats
 * (also across `clear`), which the list uses as its React and virtualiser key. Pure; unit-tested.
 */

export interface HeldLine {
  /** Position in the stream since the view opened; stable while the line is held. */
  seq: number;
  ts: string;
  text: string;
  /** Which of the view's streams the line came from (the pod of a multi-pod view); 0 for one stream. */
  source: number;
}

export interface LogBufferLimits {
  /** Lines held at most; older lines are dropped. */
  maxLines: number;
  /** Characters held at most over all lines (a second bound for very long lines). */
  maxChars: number;
  /** A longer line is cut here, with a note of how much was cut. */
  maxLineLength: number;
}

export const defaultLogBufferLimits: LogBufferLimits = {
  maxLines: 50_000,
  maxChars: 64 * 1024 * 1024,
  maxLineLength: 32 * 1024,
};

export class LogBuffer {
  readonly limits: LogBufferLimits;
  private slots: (HeldLine | undefined)[] = [];
  private first = 0;
  private next = 0;
  private chars = 0;
  private droppedLines = 0;
  /** Bumped on every change, so views know when to re-render. */
  version = 0;

  constructor(limits: Partial<LogBufferLimits> = {}) {
    this.limits = { ...defaultLogBufferLimits, ...limits };
    if (this.limits.maxLines < 1) throw new RangeError("maxLines must be at least 1");
  }

  get size(): number {
    return this.next - this.first;
  }

  /** Sequence number of the oldest line held. */
  get firstSeq(): number {
    return this.first;
  }

  /** Sequence number the next pushed line will get. */
  get nextSeq(): number {
    return this.next;
  }

  /** Lines dropped to stay within the limits since the view opened (or was cleared). */
  get dropped(): number {
    return this.droppedLines;
  }

  get heldChars(): number {
    return this.chars;
  }

  push(lines: Iterable<{ ts: string; text: string; source?: number }>): void {
    const { maxLines, maxChars, maxLineLength } = this.limits;
    let changed = false;
    for (const line of lines) {
      const text =
        line.text.length > maxLineLength
          ? `${line.text.slice(0, maxLineLength)} … [${line.text.length - maxLineLength} more characters cut]`
          : line.text;
      if (this.size === maxLines) this.dropOldest();
      const seq = this.next++;
      this.slots[seq % maxLines] = { seq, ts: line.ts, text, source: line.source ?? 0 };
      this.chars += text.length;
      changed = true;
    }
    while (this.chars > maxChars && this.size > 1) this.dropOldest();
    if (changed) this.version++;
  }

  private dropOldest(): void {
    const slot = this.first % this.limits.maxLines;
    this.chars -= this.slots[slot]?.text.length ?? 0;
    this.slots[slot] = undefined;
    this.first++;
    this.droppedLines++;
  }

  /** The line at `index` (0 is the oldest held). */
  at(index: number): HeldLine | undefined {
    if (index < 0 || index >= this.size) return undefined;
    return this.bySeq(this.first + index);
  }

  bySeq(seq: number): HeldLine | undefined {
    if (seq < this.first || seq >= this.next) return undefined;
    return this.slots[seq % this.limits.maxLines];
  }

  *[Symbol.iterator](): IterableIterator<HeldLine> {
    for (let seq = this.first; seq < this.next; seq++) {
      const line = this.slots[seq % this.limits.maxLines];
      if (line) yield line;
    }
  }

  /** Forget every line (a new query); sequence numbers keep counting so keys never collide. */
  clear(): void {
    this.slots = [];
    this.first = this.next;
    this.chars = 0;
    this.droppedLines = 0;
    this.version++;
  }
}
