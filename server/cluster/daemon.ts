/**
 * The long-lived processes Ring0 starts beside a local cluster (ring0-simkubelet, a real node's
 * containerd, kubelet and kube-proxy): started detached with an argument array and an environment of
 * Ring0's choosing, so they outlive Ring0 like kwokctl's own; remembered in a record file ({ pid });
 * recognised by a marker in their command line (a reused pid never names our state dir); stopped
 * by that record.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import { hasExited, until } from "./process";

export interface DaemonSpec {
  /** For messages, what it becoming ready means ("containerd of ring0-real-0 serving"). */
  name: string;
  binary: string;
  args: string[];
  /** The whole environment it gets (nothing of Ring0's leaks into it). */
  env: Record<string, string>;
  cwd: string;
  /** Where { pid, ...record } is kept. */
  recordFile: string;
  /** More to remember beside the pid (e.g. the port it serves on). */
  record?: Record<string, unknown>;
  /**
   * Files it reads only when it starts (configuration, certificates). A running one whose binary,
   * arguments or these files changed since it started is restarted.
   */
  inputs?: string[];
  logFile: string;
  /** Text its command line must contain to be ours (a path under the cluster's state dir). */
  marker: string;
  /** Resolves true once it serves. */
  ready: () => Promise<boolean>;
  readyTimeoutMs?: number;
}

/** The record of a daemon ({ pid, ...what its starter kept }), if there is a readable one. */
export function readDaemonRecord(
  recordFile: string,
): ({ pid: number } & Record<string, unknown>) | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(recordFile, "utf8")) as Record<string, unknown>;
    return Number.isInteger(record.pid) ? (record as { pid: number } & Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function readDaemonPid(recordFile: string): number | undefined {
  return readDaemonRecord(recordFile)?.pid;
}

/** True when `pid` runs `binaryName` with `marker` in its command line. */
export function isOurDaemon(pid: number, binaryName: string, marker: string): boolean {
  try {
    const commandLine = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return !hasExited(pid) && commandLine.includes(binaryName) && commandLine.includes(marker);
  } catch {
    return false;
  }
}

/** The last `count` lines of a log file, joined for one error message. */
export function lastLogLines(file: string, count: number): string {
  try {
    return fs.readFileSync(file, "utf8").trim().split("\n").slice(-count).join(" | ");
  } catch {
    return "";
  }
}

function binaryName(binary: string): string {
  return binary.split("/").pop() ?? binary;
}

/** The pid of the running daemon of this record, if it is still ours. */
export function runningDaemon(
  spec: Pick<DaemonSpec, "binary" | "recordFile" | "marker">,
): number | undefined {
  const pid = readDaemonPid(spec.recordFile);
  return pid !== undefined && isOurDaemon(pid, binaryName(spec.binary), spec.marker) ? pid : undefined;
}

/** Starts the daemon (unless ours already runs) and waits until it serves; resolves with its pid. */
/** A digest of what a daemon starts from: its binary, its arguments and its input files' contents. */
export function startDigest(spec: Pick<DaemonSpec, "binary" | "args" | "inputs">): string {
  const hash = createHash("sha256").update(spec.binary);
  for (const arg of spec.args) hash.update(`\0${arg}`);
  for (const file of spec.inputs ?? []) {
    hash.update(`\0${file}\0`);
    try {
      hash.update(fs.readFileSync(file));
    } catch {
      hash.update("(missing)");
    }
  }
  return hash.digest("hex").slice(0, 32);
}

export async function ensureDaemon(spec: DaemonSpec): Promise<{ pid: number; started: boolean }> {
  const running = runningDaemon(spec);
  const digest = startDigest(spec);
  const unchanged = readDaemonRecord(spec.recordFile)?.started === digest;
  if (running !== undefined && unchanged && (await spec.ready().catch(() => false)))
    return { pid: running, started: false };
  if (running !== undefined) await stopDaemon(spec);
  if (!fs.existsSync(spec.binary)) throw new Error(`${spec.binary} is missing: run \`npm run kube:build\``);
  const out = fs.openSync(spec.logFile, "a");
  const child = spawn(spec.binary, spec.args, {
    detached: true,
    stdio: ["ignore", out, out],
    env: spec.env as NodeJS.ProcessEnv,
    cwd: spec.cwd,
  });
  fs.closeSync(out);
  child.unref();
  const pid = child.pid;
  if (!pid) throw new Error(`${binaryName(spec.binary)} did not start (see ${spec.logFile})`);
  fs.writeFileSync(spec.recordFile, `${JSON.stringify({ pid, ...spec.record, started: digest })}\n`, {
    mode: 0o600,
  });
  try {
    await until(spec.name, spec.readyTimeoutMs ?? 60_000, async () => {
      if (hasExited(pid)) throw new Error(`it exited: ${lastLogLines(spec.logFile, 4)}`);
      return (await spec.ready().catch(() => false)) ? true : undefined;
    });
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)} (log: ${spec.logFile})`);
  }
  return { pid, started: true };
}

/**
 * Stops the daemon of this record (SIGTERM, SIGKILL after `graceMs`) and waits until it has let go
 * of its files; forgets the record. Resolves with the pid stopped, if one ran.
 */
export async function stopDaemon(
  spec: Pick<DaemonSpec, "binary" | "recordFile" | "marker">,
  graceMs = 10_000,
): Promise<number | undefined> {
  const pid = runningDaemon(spec);
  fs.rmSync(spec.recordFile, { force: true });
  if (pid === undefined) return undefined;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return undefined;
  }
  try {
    await until(`pid ${pid} exiting`, graceMs, async () => (hasExited(pid) ? true : undefined));
  } catch {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
    await until(`pid ${pid} exiting after SIGKILL`, 10_000, async () => (hasExited(pid) ? true : undefined));
  }
  return pid;
}
