/** Memory as a bench reads it: another process's RSS from /proc, and this process's after a full GC. */
import fs from "node:fs";
import v8 from "node:v8";
import vm from "node:vm";
import { sleep } from "./run";

/** VmRSS of a process in KiB (0 when it is gone). */
export function rssKiB(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * A process's memory in KiB from /proc/<pid>/smaps_rollup (zeros when it is gone): resident (rss),
 * proportional (pss: pages shared with other processes, such as a binary's text, divided among
 * them) and anonymous (its own heap and stacks: what one more such process really adds).
 */
export function memoryKiB(pid: number): { rss: number; pss: number; anonymous: number } {
  try {
    const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, "m").exec(text)?.[1] ?? 0);
    return { rss: field("Rss"), pss: field("Pss"), anonymous: field("Anonymous") };
  } catch {
    return { rss: 0, pss: 0, anonymous: 0 };
  }
}

let gc: (() => void) | undefined;

/** `global.gc`, exposed for this process when it was started without --expose-gc. */
function exposedGc(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return ((globalThis as { gc?: () => void }).gc ?? vm.runInNewContext("gc")) as () => void;
}

/** This process's memory after three full collections (a little apart, so finalisers run). */
export async function memoryAfterGc(): Promise<NodeJS.MemoryUsage> {
  gc ??= exposedGc();
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(50);
  }
  return process.memoryUsage();
}
