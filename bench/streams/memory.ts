/**
 * The stream server's memory over a hold: samples after a full GC, and whether they grew (the
 * slope, and the last sample against the early plateau); and how many inotify instances are free.
 */
import fs from "node:fs";
import { percentile, round } from "../lib/figures";
import { memoryAfterGc } from "../lib/memory";

export interface MemorySample {
  atSeconds: number;
  rssMB: number;
  heapUsedMB: number;
  streams: number;
}

/** This process's RSS and heapUsed in MB, after a full GC. */
export async function memoryNow(): Promise<{ rssMB: number; heapUsedMB: number }> {
  const usage = await memoryAfterGc();
  return { rssMB: round(usage.rss / 2 ** 20), heapUsedMB: round(usage.heapUsed / 2 ** 20) };
}

/** Least-squares slope of `values` over `seconds`, per minute. */
function slopePerMinute(seconds: number[], values: number[]): number {
  const n = seconds.length;
  if (n < 2) return 0;
  const meanX = seconds.reduce((a, b) => a + b, 0) / n;
  const meanY = values.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += ((seconds[i] as number) - meanX) * ((values[i] as number) - meanY);
    den += ((seconds[i] as number) - meanX) ** 2;
  }
  return den === 0 ? 0 : round((num / den) * 60, 2);
}

function median(values: number[]): number {
  return percentile(values, 50);
}

/** First/last/max, the slope, and "no growth": last within the margin of the early plateau. */
export function memorySeries(
  samples: MemorySample[],
  key: "rssMB" | "heapUsedMB",
  margin: { pct: number; mb: number },
) {
  const values = samples.map((sample) => sample[key]);
  const early = samples.filter((sample) => sample.atSeconds <= 60).map((sample) => sample[key]);
  const plateau = median(early.length > 0 ? early : values.slice(0, 1));
  const last = values[values.length - 1] ?? Number.NaN;
  const allowed = Math.max(plateau * margin.pct, margin.mb);
  return {
    first: values[0],
    last,
    max: Math.max(...values),
    earlyPlateau: plateau,
    slopeMBPerMinute: slopePerMinute(
      samples.map((sample) => sample.atSeconds),
      values,
    ),
    lastOverPlateauMB: round(last - plateau),
    allowedMB: round(allowed),
    noGrowth: last - plateau <= allowed,
  };
}

/** inotify instances: the per-user limit, how many our uid's processes hold, how many are free. */
export function inotifyHeadroom(): { limit: number; used: number; free: number } {
  const limit = Number(fs.readFileSync("/proc/sys/fs/inotify/max_user_instances", "utf8").trim());
  const uid = process.getuid?.() ?? 0;
  let used = 0;
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.statSync(`/proc/${entry}`).uid !== uid) continue;
      for (const fd of fs.readdirSync(`/proc/${entry}/fd`)) {
        if (fs.readlinkSync(`/proc/${entry}/fd/${fd}`) === "anon_inode:inotify") used += 1;
      }
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return { limit, used, free: Math.max(0, limit - used) };
}
