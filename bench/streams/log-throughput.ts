/**
 * Log throughput: a pod writes its lines to its log as fast as it can; lines/s, MB/s and
 * completeness through Ring0's /ws/logs into a headless `ws` client, against `kubectl logs -f` on
 * the same pod, rounds interleaved. `runLogs` is the client process's side; `measureLogThroughput`
 * the server's.
 */
import fs from "node:fs";
import WebSocket from "ws";
import type { ServerFrame } from "@/server/core/stream-protocol";
import { ratio, round, say, spread } from "../lib/figures";
import type { CleanupStack } from "../lib/run";
import { sleep } from "../lib/run";
import { type KubectlTarget, kubectlProcess } from "./baselines";
import type { ClientProcess } from "./client";
import { appendLine, criTimestamp, lineSplitter, withTimeout } from "./lines";
import { LOG_FILLER, LOG_LINES, ROUNDS } from "./sizes";

export interface LogsTask {
  kind: "logs";
  arm: "ring0" | "kubectl";
  marker: string;
  logFile: string;
  lines: number;
  /** ring0: the /ws/logs URL and its headers. */
  url?: string;
  headers?: Record<string, string>;
  /** kubectl: the binary, its kubeconfig, a cache dir, the pod. */
  kubectl?: KubectlTarget;
}

export interface LogsResult {
  arm: string;
  received: number;
  inOrder: boolean;
  complete: boolean;
  seconds: number;
  linesPerSecond: number;
  mbPerSecond: number;
  payloadMB: number;
  writeMs: number;
  problem?: string;
}

/** Counts `<marker> <i> …` lines after `<marker> ready`, checking the order. */
function logCounter(marker: string, total: number) {
  const prefix = `${marker} `;
  let ready = false;
  let received = 0;
  let next = 0;
  let outOfOrder = 0;
  let bytes = 0;
  let lastAt = 0;
  let resolveReady: () => void = () => {};
  let resolveDone: () => void = () => {};
  const readyPromise = new Promise<void>((resolve) => {
    resolveReady = resolve;
  });
  const donePromise = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  return {
    see(text: string) {
      if (!text.startsWith(prefix)) return;
      const rest = text.slice(prefix.length);
      if (rest === "ready") {
        ready = true;
        resolveReady();
        return;
      }
      if (!ready) return;
      received += 1;
      bytes += text.length + 1;
      const index = Number(rest.slice(0, rest.indexOf(" ")));
      if (index === next) next += 1;
      else outOfOrder += 1;
      lastAt = performance.now();
      if (received >= total) resolveDone();
    },
    ready: readyPromise,
    done: donePromise,
    state: () => ({ received, inOrder: outOfOrder === 0 && next === received, bytes, lastAt }),
  };
}

/** The batch a pod writes, prepared before the clock starts: 5000 CRI lines per append. */
function logBatch(marker: string, lines: number): string[] {
  const chunks: string[] = [];
  const at = new Date();
  let chunk: string[] = [];
  for (let i = 0; i < lines; i++) {
    chunk.push(`${criTimestamp(at, i)} stdout F ${marker} ${i} ${LOG_FILLER}\n`);
    if (chunk.length === 5_000) {
      chunks.push(chunk.join(""));
      chunk = [];
    }
  }
  if (chunk.length > 0) chunks.push(chunk.join(""));
  return chunks;
}

export async function runLogs(task: LogsTask): Promise<LogsResult> {
  const counter = logCounter(task.marker, task.lines);
  const batch = logBatch(task.marker, task.lines);
  const payloadBytes = batch.length > 0 ? task.lines * `${task.marker} 0 ${LOG_FILLER}\n`.length : 0;
  // The last line now is the sentinel: a follow with tail 1 shows it once the stream is live.
  appendLine(task.logFile, `${task.marker} ready`);
  let stop: () => void;
  let problem: string | undefined;
  if (task.arm === "ring0") {
    const socket = new WebSocket(task.url as string, { headers: task.headers, perMessageDeflate: false });
    socket.on("message", (data: Buffer, isBinary) => {
      if (isBinary) return;
      const frame = JSON.parse(data.toString()) as ServerFrame;
      if (frame.type === "lines") for (const line of frame.lines) counter.see(line.text);
      else if (frame.type === "error") problem ??= frame.message;
    });
    socket.on("error", (error) => {
      problem ??= error.message;
    });
    stop = () => socket.close();
  } else {
    const target = task.kubectl as KubectlTarget;
    const child = kubectlProcess(target, ["logs", "-f", "--tail=1", target.pod]);
    child.stdout?.on("data", lineSplitter(counter.see));
    child.stderr?.on("data", (chunk: Buffer) => {
      problem ??= chunk.toString().trim();
    });
    stop = () => child.kill("SIGTERM");
  }
  try {
    await withTimeout(counter.ready, 60_000, `${task.arm} log stream becoming live`);
    const started = performance.now();
    for (const chunk of batch) {
      fs.appendFileSync(task.logFile, chunk);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const writeMs = performance.now() - started;
    // Ends when every line arrived, or when nothing arrived for 30 s (incomplete).
    for (let seen = -1; ; ) {
      const settled = await Promise.race([counter.done.then(() => true), sleep(30_000).then(() => false)]);
      if (settled || counter.state().received === seen) break;
      seen = counter.state().received;
    }
    const state = counter.state();
    const seconds = (state.lastAt - started) / 1000;
    return {
      arm: task.arm,
      received: state.received,
      inOrder: state.inOrder,
      complete: state.received === task.lines && state.inOrder,
      seconds: round(seconds, 2),
      linesPerSecond: Math.round(state.received / seconds),
      mbPerSecond: round(state.bytes / 1e6 / seconds, 2),
      payloadMB: round(payloadBytes / 1e6, 1),
      writeMs: Math.round(writeMs),
      ...(problem ? { problem } : {}),
    };
  } finally {
    stop();
  }
}

/** Both arms, ROUNDS rounds alternating which goes first; each arm's spread over its runs. */
export async function measureLogThroughput(options: {
  client: ClientProcess;
  cleanup: CleanupStack;
  /** ring0: the pod's /ws/logs URL with the tenant admin's headers. */
  ring0: { url: string; headers: Record<string, string> };
  kubectl: KubectlTarget;
  logFile: string;
}) {
  const { client, cleanup } = options;
  const order = (round: number) =>
    round % 2 === 0 ? (["ring0", "kubectl"] as const) : (["kubectl", "ring0"] as const);
  const logRuns: LogsResult[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const arm of order(r)) {
      cleanup.throwIfStopping();
      const run = await client.run<LogsResult>({
        kind: "logs",
        arm,
        // Markers of one length, so both arms carry the same bytes.
        marker: `tp${r}${arm === "ring0" ? "w" : "k"}`,
        logFile: options.logFile,
        lines: LOG_LINES,
        ...(arm === "ring0" ? options.ring0 : { kubectl: options.kubectl }),
      });
      logRuns.push(run);
      say(`logs ${arm}: ${JSON.stringify(run)}`);
    }
  }
  const logArm = (arm: string) => {
    const runs = logRuns.filter((run) => run.arm === arm);
    return {
      linesPerSecond: spread(runs.map((run) => run.linesPerSecond)),
      mbPerSecond: spread(runs.map((run) => run.mbPerSecond)),
      seconds: spread(runs.map((run) => run.seconds)),
      complete: runs.every((run) => run.complete),
      received: runs.map((run) => run.received),
    };
  };
  const logRing0 = logArm("ring0");
  const logKubectl = logArm("kubectl");
  return {
    lines: LOG_LINES,
    payloadMB: logRuns[0]?.payloadMB,
    logFileMB: round(
      (LOG_LINES * `${criTimestamp(new Date(), 0)} stdout F tp0w 100000 ${LOG_FILLER}\n`.length) / 1e6,
      1,
    ),
    ring0: logRing0,
    kubectlLogsF: logKubectl,
    ring0ToKubectlLinesPerSecondP50: ratio(logRing0.linesPerSecond.p50, logKubectl.linesPerSecond.p50),
    runs: logRuns,
  };
}
