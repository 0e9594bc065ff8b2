/**
 * Text as the streams benchmark's clients see it: CRI log lines written to a simulated pod's log,
 * byte streams split into lines, and a wait with a deadline.
 */
import fs from "node:fs";

export function criTimestamp(at: Date, nanos: number): string {
  return `${at.toISOString().slice(0, 19)}.${String(nanos % 1_000_000_000).padStart(9, "0")}Z`;
}

export function appendLine(file: string, text: string): void {
  const now = new Date();
  fs.appendFileSync(file, `${criTimestamp(now, now.getMilliseconds() * 1_000_000)} stdout F ${text}\n`);
}

/** Splits a byte stream into lines (ASCII), "\r\n" or "\n". */
export function lineSplitter(onLine: (line: string) => void) {
  let partial = "";
  return (chunk: Buffer) => {
    const text = partial + chunk.toString("latin1");
    let start = 0;
    for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
      const end = newline > start && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      onLine(text.slice(start, end));
      start = newline + 1;
    }
    partial = text.slice(start);
  };
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
