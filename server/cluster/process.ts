/**
 * The processes of Ring0's local kwokctl clusters. Child processes are run with argument arrays only,
 * bounded in time, output captured; running ones are found by the work dir in their command line,
 * killed, and waited for until they have let go of their files and ports.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  timeoutMs: number;
  /** Called with each complete output line (stdout and stderr) as it arrives. */
  onLine?: (line: string, stream: "stdout" | "stderr") => void;
}

export class CommandError extends Error {
  override name = "CommandError";
  constructor(
    message: string,
    readonly result: RunResult,
  ) {
    super(message);
  }
}

function lastLines(text: string, count: number): string {
  return text.trim().split("\n").slice(-count).join("\n");
}

/** Run `command args…`; resolves with its output, rejects on a non-zero exit or the timeout. */
export function run(command: string, args: string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: (options.env ?? process.env) as NodeJS.ProcessEnv,
      cwd: options.cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = { stdout: "", stderr: "" };
    const partial = { stdout: "", stderr: "" };
    const collect = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output[stream] += text;
      if (!options.onLine) return;
      partial[stream] += text;
      const lines = partial[stream].split("\n");
      partial[stream] = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) options.onLine(line, stream);
    };
    child.stdout.on("data", collect("stdout"));
    child.stderr.on("data", collect("stderr"));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
    }, options.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(
        new CommandError(`${command} could not be started: ${error.message}`, { code: null, ...output }),
      );
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const result = { code, ...output };
      const name = [command.split("/").pop(), ...args.slice(0, 3)].join(" ");
      if (timedOut) {
        reject(
          new CommandError(`${name} did not finish within ${Math.round(options.timeoutMs / 1000)} s`, result),
        );
      } else if (code !== 0) {
        const detail = lastLines(output.stderr || output.stdout, 8);
        reject(new CommandError(`${name} failed (exit ${code})${detail ? `:\n${detail}` : ""}`, result));
      } else {
        resolve(result);
      }
    });
  });
}

/** Poll `probe` every 250 ms until it yields a value; throws naming `what` after `timeoutMs`. */
export async function until<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const detail = lastError instanceof Error ? `: ${lastError.message}` : "";
  throw new Error(`${what} did not happen within ${Math.round(timeoutMs / 1000)} s${detail}`);
}

/** PIDs of processes (other than this one) whose command line mentions `needle`. */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const commandLine = fs.readFileSync(path.join("/proc", entry, "cmdline"), "utf8");
      if (commandLine.includes(needle)) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/**
 * True once `pid` has let go of its files and sockets: gone, or a zombie without live threads. (A
 * dying process loses its command line before it closes its sockets, so an empty cmdline is not enough.)
 */
export function hasExited(pid: number): boolean {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return true;
  }
  const state = /^State:\s+(\S)/m.exec(status)?.[1];
  const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? "1");
  return (state === "Z" || state === "X") && threads <= 1;
}

/** Wait until every pid has exited (see `hasExited`). */
export async function waitExited(pids: number[], timeoutMs = 10_000): Promise<void> {
  if (pids.length === 0) return;
  await until(`processes ${pids.join(", ")} exiting`, timeoutMs, async () =>
    pids.every(hasExited) ? true : undefined,
  );
}

/** SIGKILL every process mentioning `needle` and wait until they have exited; returns the pids killed. */
export async function killProcessesMentioning(needle: string, timeoutMs = 10_000): Promise<number[]> {
  const killed = processesMentioning(needle);
  for (const pid of killed) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await waitExited(killed, timeoutMs);
  return killed;
}

/** A kwokctl component: running, exited (its pid file outlived its process) or stopped (no pid file). */
export type ComponentState = "running" | "exited" | "stopped";

/**
 * The state of each of `components` of the kwokctl cluster in `clusterDir`, from kwokctl's pid
 * files (`pids/<component>.pid`). A pid file may outlive its process (crash, reboot), so a component
 * runs only when that pid's command line still mentions the cluster's dir.
 */
export function kwokctlComponentStates<C extends string>(
  clusterDir: string,
  components: readonly C[],
): Record<C, ComponentState> {
  const states = {} as Record<C, ComponentState>;
  for (const component of components) {
    let pid = "";
    try {
      pid = fs.readFileSync(path.join(clusterDir, "pids", `${component}.pid`), "utf8").trim();
    } catch {
      // no pid file: stopped
    }
    if (!/^\d+$/.test(pid)) {
      states[component] = "stopped";
      continue;
    }
    let commandLine = "";
    try {
      commandLine = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      // gone
    }
    // Ours: it names the cluster's dir, and it is not kwokctl itself (which names it too, and
    // could hold a reused pid for a moment).
    const argv0 = path.basename(commandLine.split("\0")[0] ?? "");
    states[component] = commandLine.includes(`${clusterDir}/`) && argv0 !== "kwokctl" ? "running" : "exited";
  }
  return states;
}

/**
 * Removes the pid files of `components` that exited: kwokctl's "is it running" is signal 0, which
 * a zombie not yet reaped still answers (this host's PID 1 does not reap), so without this
 * `kwokctl start cluster` would skip them. Resolves with the components whose file went.
 */
export function clearExitedPidFiles<C extends string>(clusterDir: string, components: readonly C[]): C[] {
  const states = kwokctlComponentStates(clusterDir, components);
  const exited = components.filter((component) => states[component] === "exited");
  for (const component of exited)
    fs.rmSync(path.join(clusterDir, "pids", `${component}.pid`), { force: true });
  return exited;
}
