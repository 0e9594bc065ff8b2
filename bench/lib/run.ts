/**
 * One bench run from its start to its exit: a temp dir of its own (abandoned runs swept), a stack
 * of cleanups that also runs on a signal, polling with a deadline, and the end, where nothing
 * started under the run's dir may outlive it (checked in /proc).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { killProcessesMentioning, processesMentioning } from "@/server/cluster/process";
import { createLogger } from "@/server/logger";
import { say } from "./figures";

export const logger = createLogger({ service: "bench" }, "warn");

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll `probe` every `everyMs` until it yields true; throws naming `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  options: { timeoutMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: timed out`);
    await sleep(options.everyMs ?? 100);
  }
}

/**
 * Cleanups run in reverse order, each one even when an earlier one failed. `run` is single-flight
 * (a signal and the bench's own `finally` share one run); once it has started, `stopping` is true
 * and the bench should start nothing new (`throwIfStopping`).
 */
export function cleanupStack() {
  const steps: Array<{ what: string; fn: () => Promise<unknown> | unknown }> = [];
  let running: Promise<string[]> | undefined;
  return {
    push(what: string, fn: () => Promise<unknown> | unknown) {
      steps.push({ what, fn });
    },
    get stopping() {
      return running !== undefined;
    },
    throwIfStopping() {
      if (running) throw new Error("stopping: cleaning up");
    },
    run(): Promise<string[]> {
      running ??= (async () => {
        const failures: string[] = [];
        while (steps.length > 0) {
          const step = steps.pop() as (typeof steps)[number];
          try {
            await step.fn();
          } catch (error) {
            failures.push(`${step.what}: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
        return failures;
      })();
      return running;
    },
  };
}

export type CleanupStack = ReturnType<typeof cleanupStack>;

/**
 * Ctrl-C or a SIGTERM (a CI timeout) still cleans up: the stack runs, then whatever is left under
 * `dir` is killed and the dir removed, and the process exits 130.
 */
export function cleanUpOnSignal(cleanup: CleanupStack, dir: string): void {
  const stop = (signal: NodeJS.Signals) => {
    process.stderr.write(`${signal}: cleaning up\n`);
    void cleanup
      .run()
      .then(() => reapLeftovers(dir))
      .finally(() => {
        fs.rmSync(dir, { recursive: true, force: true });
        process.exit(130);
      });
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/**
 * Nothing started under `dir` may outlive the bench: kill what is left (a leak) and report it.
 * Returns the pids that had to be killed.
 */
export async function reapLeftovers(dir: string): Promise<number[]> {
  const needle = `${dir}/`;
  if (processesMentioning(needle).length === 0) return [];
  return killProcessesMentioning(needle);
}

/**
 * The end of a bench run, failed or not: the cleanup stack runs, whatever is left under `root` is
 * killed (a leak fails the run) and `root` removed. Returns what the run fails with, if anything.
 */
export async function finishBench(cleanup: CleanupStack, root: string, failed: unknown): Promise<unknown> {
  const failures = await cleanup.run();
  const leaked = await reapLeftovers(root);
  fs.rmSync(root, { recursive: true, force: true });
  if (failures.length > 0) process.stderr.write(`cleanup problems:\n  ${failures.join("\n  ")}\n`);
  if (leaked.length > 0) {
    process.stderr.write(`processes outlived their cleanup and were killed: ${leaked.join(", ")}\n`);
    return failed ?? new Error("processes leaked");
  }
  return failed;
}

/** Exits 0 when the bench's main resolves; prints the error and exits 1 when it rejects. */
export function exitWhenDone(main: Promise<void>): void {
  void main.then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}

/**
 * A temp dir for one run, marked with this process's pid. Runs of the same bench that were killed
 * outright (SIGKILL, or a wrapper that did not pass the signal on) are swept first: their leftover
 * processes are killed and their dirs removed, so a killed run never leaks for long.
 */
export async function benchDir(prefix: string): Promise<string> {
  for (const entry of fs.readdirSync(os.tmpdir())) {
    if (!entry.startsWith(prefix)) continue;
    const dir = path.join(os.tmpdir(), entry);
    let owner = Number.NaN;
    try {
      owner = Number(fs.readFileSync(path.join(dir, "owner.pid"), "utf8"));
    } catch {
      // no pid file: abandoned only when old (a run writes it right after creating the dir)
      if (Date.now() - fs.statSync(dir).mtimeMs < 5 * 60_000) continue;
    }
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) continue;
    const killed = await reapLeftovers(dir);
    fs.rmSync(dir, { recursive: true, force: true });
    say(`swept an abandoned run's ${dir}${killed.length ? ` (killed ${killed.join(", ")})` : ""}`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.writeFileSync(path.join(dir, "owner.pid"), String(process.pid));
  // Root runs embedded PostgreSQL as a separate user, which must traverse the dir.
  fs.chmodSync(dir, 0o755);
  return dir;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
