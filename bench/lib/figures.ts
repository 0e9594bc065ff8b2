/**
 * What a benchmark reports and how: its sizes (full or quick), the statistics its ratios are
 * made of, the machine it ran on, its lines on stdout, and its figures in bench/results/<name>.json.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * `./ring0 test` (and so CI) runs every benchmark in its quick mode (RING0_BENCH_QUICK=1): smaller
 * sizes and shorter holds, every ratio still computed against its baseline. `npm run bench:*`
 * runs the full sizes the README's figures come from.
 */
export const quickMode = process.env.RING0_BENCH_QUICK === "1";

/** `full`, or `quick` in quick mode. */
export function sized<T>(full: T, quick: T): T {
  return quickMode ? quick : full;
}

export const round = (value: number, digits = 1) => +value.toFixed(digits);

/** Nearest-rank percentile. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(0, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.min(sorted.length - 1, rank)] ?? Number.NaN;
}

export function summary(samples: number[], digits = 1) {
  return {
    n: samples.length,
    p50: round(percentile(samples, 50), digits),
    p95: round(percentile(samples, 95), digits),
  };
}

/** p50, min and max, two decimals: the spread of a few runs. */
export function spread(values: number[]) {
  return {
    p50: round(percentile(values, 50), 2),
    min: round(Math.min(...values), 2),
    max: round(Math.max(...values), 2),
  };
}

/** a / b with two decimals. */
export const ratio = (a: number, b: number) => round(a / b, 2);

/** The machine a run measured on: its ratios are read against it. */
export function machine() {
  return { cpus: os.cpus().length, memoryGiB: round(os.totalmem() / 2 ** 30) };
}

/** The 1-minute load average now: this machine is shared, so a run notes how loaded it was. */
export function load1(): number {
  return round(os.loadavg()[0] ?? 0, 2);
}

export function writeResults(name: string, result: unknown): void {
  fs.mkdirSync("bench/results", { recursive: true });
  const marked =
    result && typeof result === "object" ? { mode: quickMode ? "quick" : "full", ...result } : result;
  fs.writeFileSync(path.join("bench/results", `${name}.json`), `${JSON.stringify(marked, null, 2)}\n`);
}

export function say(line: string): void {
  process.stdout.write(`${line}\n`);
}
