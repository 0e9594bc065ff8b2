/**
 * Log bytes → log lines → frames. Pure and bounded: a line longer than `maxLineBytes` is cut (with
 * a marker) instead of growing a buffer forever, and a batch is flushed at `maxBatchLines` lines or
 * `maxBatchBytes` bytes, whichever comes first.
 */
import type { LogLine } from "@/server/core/stream-protocol";

const timestamped = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) ?/;

/** A kubelet log line with `timestamps=true`: "<RFC 3339 nano> <text>". Lines without one keep ts "". */
export function parseLogLine(raw: string): LogLine {
  const match = timestamped.exec(raw);
  if (!match) return { ts: "", text: raw };
  return { ts: match[1] ?? "", text: raw.slice(match[0].length) };
}

export interface LineSplitter {
  /** Complete lines in `chunk` (with what was left over from before). */
  push(chunk: Buffer): string[];
  /** The last, unterminated line, if any (end of stream). */
  end(): string[];
}

export function createLineSplitter(maxLineBytes = 65_536): LineSplitter {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let cut = false;
  const take = (): string => {
    const text = Buffer.concat(pending, pendingBytes).toString("utf8").replace(/\r$/, "");
    pending = [];
    pendingBytes = 0;
    const line = cut ? `${text} …[line cut at ${maxLineBytes} bytes]` : text;
    cut = false;
    return line;
  };
  const add = (part: Buffer) => {
    if (cut) return;
    const room = maxLineBytes - pendingBytes;
    if (part.length > room) {
      if (room > 0) pending.push(part.subarray(0, room));
      pendingBytes = maxLineBytes;
      cut = true;
      return;
    }
    pending.push(part);
    pendingBytes += part.length;
  };
  return {
    push(chunk) {
      const lines: string[] = [];
      let start = 0;
      for (let newline = chunk.indexOf(10, start); newline >= 0; newline = chunk.indexOf(10, start)) {
        add(chunk.subarray(start, newline));
        lines.push(take());
        start = newline + 1;
      }
      if (start < chunk.length) add(chunk.subarray(start));
      return lines;
    },
    end() {
      return pendingBytes > 0 || cut ? [take()] : [];
    },
  };
}

export interface Batcher {
  add(line: LogLine): void;
  /** Sends what is held now (also called by the timer). */
  flush(): void;
  /** Bytes held and not yet flushed. */
  heldBytes(): number;
  stop(): void;
}

/** Collects lines and hands them to `send` in batches, at least every `intervalMs`. */
export function createBatcher(
  send: (lines: LogLine[]) => void,
  options: { maxBatchLines?: number; maxBatchBytes?: number; intervalMs?: number } = {},
): Batcher {
  const maxLines = options.maxBatchLines ?? 1_000;
  const maxBytes = options.maxBatchBytes ?? 256 * 1024;
  let held: LogLine[] = [];
  let bytes = 0;
  const flush = () => {
    if (held.length === 0) return;
    const batch = held;
    held = [];
    bytes = 0;
    send(batch);
  };
  const timer = setInterval(flush, options.intervalMs ?? 50);
  timer.unref();
  return {
    add(line) {
      held.push(line);
      bytes += line.text.length + line.ts.length + 16;
      if (held.length >= maxLines || bytes >= maxBytes) flush();
    },
    flush,
    heldBytes: () => bytes,
    stop() {
      clearInterval(timer);
    },
  };
}
