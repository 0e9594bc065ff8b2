/**
 * ring0-simkubelet, the kubelet API of the local super cluster's simulated (kwok) nodes (its source
 * is tools/kube/kwok/simkubelet): exec in a sandbox, simulated logs, client certificates only. It
 * runs beside the cluster's processes, outlives Ring0 like them, and keeps its port across restarts
 * (nodes advertise it in their status).
 *
 * State, under the cluster's kwokctl work dir:
 *   sim-kubelet.json           { pid, port } of the running one
 *   sim-kubelet/rootfs/        the sandboxes' read-only root (rebuilt on every start)
 *   clusters/<name>/logs/ring0-simkubelet.log
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "@/server/logger";
import { NODE_PROXY_GROUP, type NodePki } from "./hardening";
import { freeLoopbackPorts, isListening, isPortFree } from "./ports";
import { hasExited, until } from "./process";

export const SIM_KUBELET_BINARY = "ring0-simkubelet";

/** Where Debian's busybox-static puts its binary: the only program in the sandboxes' root. */
export const BUSYBOX_PATHS = ["/bin/busybox", "/usr/bin/busybox"];

export interface SimKubeletOptions {
  kwokDir: string;
  /** kwokctl's log dir of the cluster (the sim-kubelet's log lives beside the components'). */
  logsDir: string;
  /** Simulated pod logs: <podLogsDir>/<namespace>/<pod>.log. */
  podLogsDir: string;
  binDir: string;
  pki: NodePki;
  logger: Logger;
}

interface SimKubeletRecord {
  pid: number;
  port: number;
}

export function simKubeletLogFile(logsDir: string): string {
  return path.join(logsDir, `${SIM_KUBELET_BINARY}.log`);
}

function recordFile(kwokDir: string): string {
  return path.join(kwokDir, "sim-kubelet.json");
}

function readRecord(kwokDir: string): SimKubeletRecord | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(recordFile(kwokDir), "utf8")) as Partial<SimKubeletRecord>;
    if (Number.isInteger(value.pid) && Number.isInteger(value.port)) return value as SimKubeletRecord;
  } catch {
    // none yet
  }
  return undefined;
}

/** True when `pid` is a sim-kubelet of this cluster (a reused pid would not name our work dir). */
function isOurs(pid: number, kwokDir: string): boolean {
  try {
    const commandLine = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return commandLine.includes(SIM_KUBELET_BINARY) && commandLine.includes(`${kwokDir}/`);
  } catch {
    return false;
  }
}

function busybox(): string | undefined {
  return BUSYBOX_PATHS.find((candidate) => fs.existsSync(candidate));
}

function lastLines(file: string, count: number): string {
  try {
    return fs.readFileSync(file, "utf8").trim().split("\n").slice(-count).join(" | ");
  } catch {
    return "";
  }
}

/** The running sim-kubelet's port, starting one when none runs (on its previous port when free). */
export async function ensureSimKubelet(options: SimKubeletOptions): Promise<number> {
  const log = options.logger.child({ component: "sim-kubelet" });
  const previous = readRecord(options.kwokDir);
  if (previous && isOurs(previous.pid, options.kwokDir) && (await isListening(previous.port))) {
    return previous.port;
  }
  const binary = path.join(options.binDir, SIM_KUBELET_BINARY);
  if (!fs.existsSync(binary)) {
    throw new Error(`${binary} is missing: run \`npm run kube:build\` to build it`);
  }
  const port =
    previous && (await isPortFree(previous.port))
      ? previous.port
      : ((await freeLoopbackPorts(1))[0] as number);
  const rootfs = path.join(options.kwokDir, "sim-kubelet", "rootfs");
  fs.mkdirSync(path.dirname(rootfs), { recursive: true, mode: 0o700 });
  fs.mkdirSync(options.podLogsDir, { recursive: true, mode: 0o700 });
  fs.mkdirSync(options.logsDir, { recursive: true });
  const logFile = simKubeletLogFile(options.logsDir);
  const found = busybox();
  if (!found) {
    log.warn(
      "no busybox (Debian: apt-get install busybox-static): exec on simulated nodes is refused until it is installed",
    );
  }
  const args = [
    `--listen=127.0.0.1:${port}`,
    `--tls-cert-file=${options.pki["sim-kubelet"].certFile}`,
    `--tls-private-key-file=${options.pki["sim-kubelet"].keyFile}`,
    `--client-ca-file=${options.pki["kubelet-client-ca"].certFile}`,
    `--authorized-groups=system:masters,${NODE_PROXY_GROUP}`,
    `--logs-dir=${options.podLogsDir}`,
    `--rootfs=${rootfs}`,
    `--busybox=${found ?? BUSYBOX_PATHS[0]}`,
  ];
  const out = fs.openSync(logFile, "a");
  const child = spawn(binary, args, {
    detached: true,
    stdio: ["ignore", out, out],
    // Nothing of Ring0's environment reaches it, and through it the sandboxes.
    env: { PATH: "/usr/local/bin:/usr/bin:/bin" } as Record<string, string> as NodeJS.ProcessEnv,
    cwd: options.kwokDir,
  });
  fs.closeSync(out);
  child.unref();
  const pid = child.pid;
  if (!pid) throw new Error(`${SIM_KUBELET_BINARY} did not start (see ${logFile})`);
  fs.writeFileSync(recordFile(options.kwokDir), `${JSON.stringify({ pid, port })}\n`, { mode: 0o600 });
  try {
    await until(`${SIM_KUBELET_BINARY} listening on 127.0.0.1:${port}`, 30_000, async () => {
      if (hasExited(pid)) throw new Error(`it exited: ${lastLines(logFile, 3)}`);
      return (await isListening(port)) ? true : undefined;
    });
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)} (log: ${logFile})`);
  }
  log.info("simulated nodes' kubelet API started", { port, pid });
  return port;
}

/** Stops the sim-kubelet of this cluster, if one runs; its sandboxes end with it. */
export function stopSimKubelet(kwokDir: string): number | undefined {
  const record = readRecord(kwokDir);
  fs.rmSync(recordFile(kwokDir), { force: true });
  if (!record || !isOurs(record.pid, kwokDir)) return undefined;
  try {
    process.kill(record.pid, "SIGTERM");
  } catch {
    return undefined;
  }
  return record.pid;
}
