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
import fs from "node:fs";
import path from "node:path";
import type { Logger } from "@/server/logger";
import { ensureDaemon, readDaemonRecord, runningDaemon } from "./daemon";
import { NODE_PROXY_GROUP, type NodePki } from "./hardening";
import { freeLoopbackPorts, isListening, isPortFree } from "./ports";

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

export function simKubeletLogFile(logsDir: string): string {
  return path.join(logsDir, `${SIM_KUBELET_BINARY}.log`);
}

function recordFile(kwokDir: string): string {
  return path.join(kwokDir, "sim-kubelet.json");
}

/** The daemon as ./daemon.ts knows it: a sim-kubelet of this cluster names its work dir. */
const daemonOf = (kwokDir: string, binDir: string) => ({
  binary: path.join(binDir, SIM_KUBELET_BINARY),
  recordFile: recordFile(kwokDir),
  marker: `${kwokDir}/`,
});

function busybox(): string | undefined {
  return BUSYBOX_PATHS.find((candidate) => fs.existsSync(candidate));
}

/** The running sim-kubelet's port, starting one when none runs (on its previous port when free). */
export async function ensureSimKubelet(options: SimKubeletOptions): Promise<number> {
  const log = options.logger.child({ component: "sim-kubelet" });
  const daemon = daemonOf(options.kwokDir, options.binDir);
  const previousPort = Number(readDaemonRecord(daemon.recordFile)?.port) || undefined;
  if (previousPort && runningDaemon(daemon) !== undefined && (await isListening(previousPort))) {
    return previousPort;
  }
  if (!fs.existsSync(daemon.binary)) {
    throw new Error(`${daemon.binary} is missing: run \`npm run kube:build\` to build it`);
  }
  const port =
    previousPort && (await isPortFree(previousPort))
      ? previousPort
      : ((await freeLoopbackPorts(1))[0] as number);
  const rootfs = path.join(options.kwokDir, "sim-kubelet", "rootfs");
  fs.mkdirSync(path.dirname(rootfs), { recursive: true, mode: 0o700 });
  fs.mkdirSync(options.podLogsDir, { recursive: true, mode: 0o700 });
  fs.mkdirSync(options.logsDir, { recursive: true });
  const found = busybox();
  if (!found) {
    log.warn(
      "no busybox (Debian: apt-get install busybox-static): exec on simulated nodes is refused until it is installed",
    );
  }
  const { pid } = await ensureDaemon({
    ...daemon,
    name: `${SIM_KUBELET_BINARY} listening on 127.0.0.1:${port}`,
    args: [
      `--listen=127.0.0.1:${port}`,
      `--tls-cert-file=${options.pki["sim-kubelet"].certFile}`,
      `--tls-private-key-file=${options.pki["sim-kubelet"].keyFile}`,
      `--client-ca-file=${options.pki["kubelet-client-ca"].certFile}`,
      `--authorized-groups=system:masters,${NODE_PROXY_GROUP}`,
      `--logs-dir=${options.podLogsDir}`,
      `--rootfs=${rootfs}`,
      `--busybox=${found ?? BUSYBOX_PATHS[0]}`,
    ],
    // Nothing of Ring0's environment reaches it, and through it the sandboxes.
    env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
    cwd: options.kwokDir,
    logFile: simKubeletLogFile(options.logsDir),
    record: { port },
    ready: () => isListening(port),
    readyTimeoutMs: 30_000,
  });
  log.info("simulated nodes' kubelet API started", { port, pid });
  return port;
}

/** Stops the sim-kubelet of this cluster, if one runs; its sandboxes end with it. */
export function stopSimKubelet(kwokDir: string): number | undefined {
  const pid = runningDaemon(daemonOf(kwokDir, ""));
  fs.rmSync(recordFile(kwokDir), { force: true });
  if (pid === undefined) return undefined;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return undefined;
  }
  return pid;
}
