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
