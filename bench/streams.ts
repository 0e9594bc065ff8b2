/**
 * Browser streams benchmark (issue 6), all in one run so every ratio compares figures taken under
 * the same machine load:
 *   1. log throughput: a pod writes 200k lines (~25 MB) to its log as fast as it can; lines/s, MB/s
 *      and completeness through Ring0's /ws/logs into a headless `ws` client, against
 *      `kubectl logs -f` on the same pod (rounds interleaved);
 *   2. `seq 1000000` through Ring0's /ws/exec (typed into a shell, lines counted until the exit
 *      frame), against `kubectl exec <pod> -- seq 1000000`: completeness and time;
 *   3. keystroke echo: one byte sent → its echo received, p50/p99, through Ring0's /ws/exec against
 *      a WebSocket exec (v5.channel.k8s.io) straight to the tenant's API server with its admin
 *      credentials, samples interleaved; the added milliseconds;
 *   4. server memory with 200 log streams and 50 shells held open (BENCH_STREAMS_HOLD_SECONDS,
 *      default 300) while the pods keep logging and the shells keep echoing: RSS and heapUsed after
 *      a full GC every 10 s, first/last/max, the slope, and whether the last sample is within a
 *      small margin of the early plateau; the idle server before as the baseline.
 *
 * Real parts throughout: a local super cluster in a temp state dir (kwok nodes, the kwok debug
 * binder serving the pods' logs and shells), a vn-agent per node, one tenant control plane of the
 * local provisioner with a Tenant object and the tenant defaults, the syncer, embedded PostgreSQL
 * with migrations (API tokens, exec session records, audit), and Ring0's stream server in this
 * process as the runtime wires it (createUpgradeHandler + authenticateStream + the logs and exec
 * endpoints + a registry; caps raised to 1000 for the hold) on 127.0.0.1. Ring0's streams are
 * opened with a tenant admin's API token (Bearer); they go Ring0 → tenant API server (as the user)
 * → vn-agent → kwok. The kubectl baselines use the tenant control plane directly with its admin
 * kubeconfig (the same API server → vn-agent → kwok path, without Ring0). Every client (the `ws`
 * clients, kubectl, the log writer) runs in a child process of this script, so the server's
 * process measures only the server. Everything is torn down with removeLocalWorld, and nothing may
 * outlive the run (checked in /proc). Writes bench/results/streams.json; never asserts on time,
 * only that every stream delivered everything.
 *
 *   NODE_OPTIONS=--expose-gc npx tsx bench/streams.ts     (npm run bench:streams)
 */
import { type ChildProcess, fork, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import WebSocket from "ws";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { localSuperCluster } from "@/server/cluster/local";
import {
  SIMULATED_POD_LABEL,
  simulatedPodLogFile,
  startSimulatedPodLogs,
} from "@/server/cluster/simulated-pods";
import type { ServerFrame } from "@/server/core/stream-protocol";
import { env } from "@/server/env";
import { installCrds } from "@/server/k8s/crds";
import { kubeRequest } from "@/server/k8s/transport";
import { createLocalProvisioner } from "@/server/provisioners/local";
import { kubeconfigFromAccess } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import { removeLocalWorld } from "@/server/runtime/local-world";
import { authenticateStream } from "@/server/streams/authenticate";
import { createExecEndpoint } from "@/server/streams/exec";
import { exitFromStatus } from "@/server/streams/exec-command";
import { createLogsEndpoint } from "@/server/streams/logs";
import { vnAgentLogProvider } from "@/server/streams/node-logs";
import { createStreamRegistry } from "@/server/streams/registry";
import { registerNodeLogProvider } from "@/server/streams/sources";
import { createUpgradeHandler, isStreamPath } from "@/server/streams/upgrade";
import { superNamespace } from "@/server/syncer/naming";
import { createSyncer } from "@/server/syncer/syncer";
import { type ControlPlaneDirectory, setControlPlaneDirectory } from "@/server/tenants/control-planes";
import { tenantApiVersion } from "@/server/tenants/tenant-resources";
import { createTokenService } from "@/server/tokens/service";
import { createUserRepository } from "@/server/users/repository";
import { startVnAgents } from "@/server/vn-agent/vn-agents";
import { startDatabase, tenantAdminToken } from "./lib/database";
import { percentile, ratio, round, say, sized, writeResults } from "./lib/figures";
import {
  benchDir,
  cleanUpOnSignal,
  cleanupStack,
  exitWhenDone,
  finishBench,
  logger,
  sleep,
  waitFor,
} from "./lib/run";
import { startBenchTenant } from "./lib/tenants";

const LOG_LINES = sized(200_000, 50_000);
/** Text of one log line: ~85 bytes, ~126 with the CRI prefix (200k lines ≈ 25 MB of log file). */
const LOG_FILLER = "x".repeat(70);
const SEQ_COUNT = sized(1_000_000, 300_000);
const ECHO_SAMPLES = 200;
const ECHO_WARMUP = 20;
const HOLD_LOG_STREAMS = 200;
const HOLD_SHELLS = 50;
const HOLD_SECONDS = Number(process.env.BENCH_STREAMS_HOLD_SECONDS ?? sized(300, 60));
const ROUNDS = Number(process.env.BENCH_STREAMS_ROUNDS ?? 2);
const SAMPLE_EVERY_MS = 10_000;
/** Pods: the first carries the throughput, exec and echo runs; the hold's log streams spread over all. */
const PODS = 4;
const NAMESPACE = "default";

// ---------------------------------------------------------------------------------------------
// The client process: every stream client and kubectl runs here, never in the server's process.
// ---------------------------------------------------------------------------------------------

interface LogsTask {
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

interface KubectlTarget {
  binary: string;
  kubeconfig: string;
  cacheDir: string;
  pod: string;
}

interface SeqTask {
  kind: "seq";
  arm: "ring0" | "kubectl" | "direct-tty";
  count: number;
  url?: string;
  headers?: Record<string, string>;
  kubectl?: KubectlTarget;
  direct?: DirectExec;
}

/** A WebSocket exec straight to the tenant API server (tty, sh) with its admin credentials. */
interface DirectExec {
  url: string;
  ca: string;
  cert: string;
  key: string;
}

interface EchoTask {
  kind: "echo";
  samples: number;
  warmup: number;
  ring0: { url: string; headers: Record<string, string> };
  direct: DirectExec;
}

interface HoldOpenTask {
  kind: "hold-open";
  /** Tenant pods' logs, the shells (the tenant admin's token), nodes' vn-agent logs (an operator's). */
  logUrls: string[];
  shellUrls: string[];
  nodeLogUrls: string[];
  headers: Record<string, string>;
  operatorHeaders: Record<string, string>;
  logFiles: string[];
}

interface HoldCloseTask {
  kind: "hold-close";
}

type ClientTask = LogsTask | SeqTask | EchoTask | HoldOpenTask | HoldCloseTask;

interface LogsResult {
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

interface SeqResult {
  arm: string;
  lines: number;
  inOrder: boolean;
  complete: boolean;
  exitCode: number | null;
  seconds: number;
  /** The shells (Ring0, direct-tty): from the typed command to the end. */
  fromKeystrokeSeconds?: number;
  problem?: string;
}

interface EchoResult {
  ring0: number[];
  direct: number[];
}

interface HoldOpenResult {
  logs: number;
  nodeLogs: number;
  shells: number;
  openSeconds: number;
}

interface HoldCloseResult {
  logsStillOpen: number;
  nodeLogsStillOpen: number;
  shellsStillOpen: number;
  fewestTickLinesPerLogStream: number;
  fewestTickEchoesPerShell: number;
  unexpectedCloses: string[];
}

const children = new Set<ChildProcess>();

function criTimestamp(at: Date, nanos: number): string {
  return `${at.toISOString().slice(0, 19)}.${String(nanos % 1_000_000_000).padStart(9, "0")}Z`;
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

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
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

function appendLine(file: string, text: string): void {
  const now = new Date();
  fs.appendFileSync(file, `${criTimestamp(now, now.getMilliseconds() * 1_000_000)} stdout F ${text}\n`);
}

function kubectlProcess(target: KubectlTarget, args: string[]): ChildProcess {
  const child = spawn(
    target.binary,
    ["--kubeconfig", target.kubeconfig, "--cache-dir", target.cacheDir, ...args],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, HOME: path.dirname(target.cacheDir) },
    },
  );
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** Splits a byte stream into lines (ASCII), "\r\n" or "\n". */
function lineSplitter(onLine: (line: string) => void) {
  let partial = "";
  return (chunk: Buffer) => {
    const text = partial + chunk.toString("latin1");
    let start = 0;
    for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
      const end = newline > start && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      onLine(text.slice(start, end));
      start = newline + 1;
    }
    partial = text.slice(start);
  };
}

async function runLogs(task: LogsTask): Promise<LogsResult> {
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

/** Counts the lines that are exactly 1, 2, … in order; notes when the last one arrived. */
function seqCounter(count: number) {
  let next = 1;
  let lines = 0;
  let outOfOrder = 0;
  let lastAt = 0;
  const push = lineSplitter((line) => {
    if (line.length === 0 || line.length > 8) return;
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if (c < 48 || c > 57) return;
    }
    lines += 1;
    if (Number(line) === next) next += 1;
    else outOfOrder += 1;
    if (next === count + 1 && lastAt === 0) lastAt = performance.now();
  });
  return { push, state: () => ({ lines, inOrder: outOfOrder === 0 && next === lines + 1, lastAt }) };
}

async function runSeq(task: SeqTask): Promise<SeqResult> {
  const counter = seqCounter(task.count);
  // A TTY's last output is lost when its session ends while kwok still reads the pty (in every
  // arm, Ring0's or not): the shell waits a second after seq before it exits. Times run to the
  // last line, not to the exit. The leading `echo` ends the line the shell's prompt is on: a
  // prompt printed after the TTY echoed the typed line would otherwise glue itself to the `1`.
  const typed = Buffer.from(`echo; seq ${task.count}; sleep 1; exit\n`);
  const started = performance.now();
  let problem: string | undefined;
  let exitCode: number | null = null;
  let typedAt = 0;
  if (task.arm === "ring0") {
    const socket = new WebSocket(task.url as string, { headers: task.headers, perMessageDeflate: false });
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.on("message", (data: Buffer, isBinary) => {
      if (isBinary) {
        if (data[0] === 1 || data[0] === 2) counter.push(data.subarray(1));
        return;
      }
      const frame = JSON.parse(data.toString()) as ServerFrame;
      if (frame.type === "started") {
        typedAt = performance.now();
        socket.send(typed, { binary: true });
      } else if (frame.type === "exit") exitCode = frame.code;
      else if (frame.type === "error") problem ??= frame.message;
    });
    socket.on("error", (error) => {
      problem ??= error.message;
    });
    try {
      await withTimeout(closed, 240_000, "seq through Ring0");
    } finally {
      socket.terminate();
    }
  } else if (task.arm === "direct-tty") {
    const direct = task.direct as DirectExec;
    const socket = new WebSocket(direct.url, ["v5.channel.k8s.io", "v4.channel.k8s.io"], {
      ca: direct.ca,
      cert: direct.cert,
      key: direct.key,
      perMessageDeflate: false,
    });
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.once("open", () => {
      typedAt = performance.now();
      socket.send(Buffer.concat([Buffer.from([0]), typed]), {
        binary: true,
      });
    });
    socket.on("message", (data: Buffer) => {
      if (data[0] === 1 || data[0] === 2) counter.push(data.subarray(1));
      else if (data[0] === 3) exitCode = exitFromStatus(data.subarray(1).toString("utf8")).code;
    });
    socket.on("error", (error) => {
      problem ??= error.message;
    });
    try {
      await withTimeout(closed, 240_000, "seq through the API server's exec");
    } finally {
      socket.terminate();
    }
  } else {
    const target = task.kubectl as KubectlTarget;
    const child = kubectlProcess(target, ["exec", target.pod, "--", "seq", String(task.count)]);
    child.stdout?.on("data", counter.push);
    child.stderr?.on("data", (chunk: Buffer) => {
      problem ??= chunk.toString().trim();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      exitCode = await withTimeout(exited, 240_000, "kubectl exec seq");
    } finally {
      child.kill("SIGKILL");
    }
  }
  const state = counter.state();
  const ended = state.lastAt || performance.now();
  return {
    arm: task.arm,
    lines: state.lines,
    inOrder: state.inOrder,
    complete: state.lines === task.count && state.inOrder && exitCode === 0,
    exitCode,
    seconds: round((ended - started) / 1000, 2),
    ...(typedAt ? { fromKeystrokeSeconds: round((ended - typedAt) / 1000, 2) } : {}),
    ...(problem ? { problem } : {}),
  };
}

/** A shell whose next output can be awaited: Ring0's /ws/exec or the API server's exec directly. */
interface EchoShell {
  send(bytes: Buffer): void;
  nextOutput(): Promise<void>;
  /** Resolves once no output came for `quietMs`. */
  settled(quietMs: number): Promise<void>;
  close(): void;
}

function echoShell(socket: WebSocket, kind: "ring0" | "direct"): Promise<EchoShell> {
  let waiter: (() => void) | undefined;
  let lastOutput = performance.now();
  return new Promise((resolve, reject) => {
    const shell: EchoShell = {
      send: (bytes) =>
        socket.send(kind === "ring0" ? bytes : Buffer.concat([Buffer.from([0]), bytes]), { binary: true }),
      nextOutput: () =>
        withTimeout(
          new Promise<void>((done) => {
            waiter = done;
          }),
          10_000,
          `${kind} keystroke echo`,
        ),
      async settled(quietMs) {
        while (performance.now() - lastOutput < quietMs) await sleep(50);
      },
      close: () => {
        if (socket.readyState === socket.OPEN) shell.send(Buffer.from("exit\n"));
        setTimeout(() => socket.terminate(), 500).unref();
      },
    };
    socket.on("message", (data: Buffer, isBinary) => {
      if (!isBinary) {
        const frame = JSON.parse(data.toString()) as ServerFrame;
        if (frame.type === "started") resolve(shell);
        else if (frame.type === "error") reject(new Error(frame.message));
        return;
      }
      if (data[0] !== 1 && data[0] !== 2) return;
      lastOutput = performance.now();
      const done = waiter;
      waiter = undefined;
      done?.();
    });
    if (kind === "direct") socket.once("open", () => resolve(shell));
    socket.once("error", reject);
    socket.once("unexpected-response", (_request, response) =>
      reject(new Error(`${kind} exec answered ${response.statusCode}`)),
    );
  });
}

async function runEcho(task: EchoTask): Promise<EchoResult> {
  const shells = {
    ring0: await echoShell(
      new WebSocket(task.ring0.url, { headers: task.ring0.headers, perMessageDeflate: false }),
      "ring0",
    ),
    direct: await echoShell(
      new WebSocket(task.direct.url, ["v5.channel.k8s.io", "v4.channel.k8s.io"], {
        ca: task.direct.ca,
        cert: task.direct.cert,
        key: task.direct.key,
        perMessageDeflate: false,
      }),
      "direct",
    ),
  };
  try {
    await Promise.all([shells.ring0.settled(1_000), shells.direct.settled(1_000)]);
    const samples: EchoResult = { ring0: [], direct: [] };
    const arms = ["ring0", "direct"] as const;
    for (let i = -task.warmup; i < task.samples; i++) {
      // A printable byte, then DEL erasing it: each echoes, and the line never grows.
      const byte = Buffer.from(i % 2 === 0 ? "a" : "\x7f");
      for (const arm of i % 2 === 0 ? arms : [...arms].reverse()) {
        const shell = shells[arm];
        const output = shell.nextOutput();
        const sent = performance.now();
        shell.send(byte);
        await output;
        if (i >= 0) samples[arm].push(performance.now() - sent);
        // Let a split echo (e.g. "\b \b" in two frames) arrive before the next byte.
        await shell.settled(5);
      }
    }
    return samples;
  } finally {
    shells.ring0.close();
    shells.direct.close();
  }
}

interface HeldStream {
  kind: "logs" | "node-logs" | "shell";
  socket: WebSocket;
  ticks: number;
  closed?: string;
}

let held: HeldStream[] = [];
let holdTimers: NodeJS.Timeout[] = [];

function openHeld(
  kind: HeldStream["kind"],
  url: string,
  headers: Record<string, string>,
): Promise<HeldStream> {
  const socket = new WebSocket(url, { headers, perMessageDeflate: false });
  const stream: HeldStream = { kind, socket, ticks: 0 };
  return new Promise((resolve, reject) => {
    const split = lineSplitter((line) => {
      if (line.includes("tick-")) stream.ticks += 1;
    });
    socket.on("message", (data: Buffer, isBinary) => {
      if (isBinary) {
        // The shell's output: the echoed command and its output both contain "tick-" (2 per tick).
        if (data[0] === 1) split(data.subarray(1));
        return;
      }
      const frame = JSON.parse(data.toString()) as ServerFrame;
      if (frame.type === "lines") {
        for (const line of frame.lines)
          if (kind === "node-logs" || line.text.startsWith("hold tick-")) stream.ticks += 1;
      } else if ((frame.type === "status" && frame.state === "following") || frame.type === "started") {
        resolve(stream);
      } else if (frame.type === "error") {
        stream.closed = `${kind}: ${frame.message}`;
        reject(new Error(stream.closed));
      }
    });
    socket.on("close", (code, reason) => {
      stream.closed ??= `${kind}: closed ${code} ${reason.toString()}`;
      reject(new Error(stream.closed));
    });
    socket.on("error", (error) => reject(error));
  });
}

async function holdOpen(task: HoldOpenTask): Promise<HoldOpenResult> {
  const started = performance.now();
  const plan = [
    ...task.logUrls.map((url) => ["logs", url, task.headers] as const),
    ...task.nodeLogUrls.map((url) => ["node-logs", url, task.operatorHeaders] as const),
    ...task.shellUrls.map((url) => ["shell", url, task.headers] as const),
  ];
  // Ten at a time, as a crowd of browsers would arrive, not one burst of 250 upgrades.
  for (let i = 0; i < plan.length; i += 10) {
    const opened = await Promise.all(
      plan.slice(i, i + 10).map(([kind, url, headers]) => openHeld(kind, url, headers)),
    );
    held.push(...opened);
  }
  // The pods keep logging (a line each per 5 s) and every shell echoes something every 10 s.
  let tick = 0;
  holdTimers.push(
    setInterval(() => {
      tick += 1;
      for (const file of task.logFiles) appendLine(file, `hold tick-${tick}`);
    }, 5_000),
    setInterval(() => {
      for (const stream of held) {
        if (stream.kind === "shell" && stream.socket.readyState === stream.socket.OPEN) {
          stream.socket.send(Buffer.from(`echo tick-${tick}\n`), { binary: true });
        }
      }
    }, 10_000),
  );
  return {
    logs: held.filter((stream) => stream.kind === "logs").length,
    nodeLogs: held.filter((stream) => stream.kind === "node-logs").length,
    shells: held.filter((stream) => stream.kind === "shell").length,
    openSeconds: round((performance.now() - started) / 1000, 1),
  };
}

async function holdClose(): Promise<HoldCloseResult> {
  for (const timer of holdTimers) clearInterval(timer);
  holdTimers = [];
  const open = (kind: HeldStream["kind"]) =>
    held.filter((stream) => stream.kind === kind && stream.socket.readyState === stream.socket.OPEN);
  const ticks = (kind: HeldStream["kind"]) => {
    const counts = held.filter((stream) => stream.kind === kind).map((stream) => stream.ticks);
    return counts.length > 0 ? Math.min(...counts) : 0;
  };
  const result: HoldCloseResult = {
    logsStillOpen: open("logs").length,
    nodeLogsStillOpen: open("node-logs").length,
    shellsStillOpen: open("shell").length,
    fewestTickLinesPerLogStream: ticks("logs"),
    // Each tick shows twice in a shell: the echoed command line and its output.
    fewestTickEchoesPerShell: Math.floor(ticks("shell") / 2),
    unexpectedCloses: held.flatMap((stream) => (stream.closed ? [stream.closed] : [])),
  };
  await Promise.all(
    held.map(
      (stream) =>
        new Promise<void>((resolve) => {
          if (stream.socket.readyState === stream.socket.CLOSED) return resolve();
          stream.socket.once("close", () => resolve());
          if (stream.kind === "shell") stream.socket.send(Buffer.from("exit\n"), { binary: true });
          else stream.socket.close();
          setTimeout(() => {
            stream.socket.terminate();
            resolve();
          }, 10_000).unref();
        }),
    ),
  );
  held = [];
  return result;
}

function runClientTask(task: ClientTask): Promise<unknown> {
  switch (task.kind) {
    case "logs":
      return runLogs(task);
    case "seq":
      return runSeq(task);
    case "echo":
      return runEcho(task);
    case "hold-open":
      return holdOpen(task);
    case "hold-close":
      return holdClose();
  }
}

function clientMain(): void {
  process.on("message", (message: { id: number; task: ClientTask }) => {
    runClientTask(message.task).then(
      (result) => process.send?.({ id: message.id, result }),
      (error: unknown) =>
        process.send?.({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  // The bench went away: so does every client and kubectl of it.
  process.on("disconnect", () => process.exit(0));
  process.on("exit", () => {
    for (const child of children) child.kill("SIGKILL");
  });
}

interface ClientProcess {
  run<T>(task: ClientTask): Promise<T>;
  stop(): Promise<void>;
}

/** This script again as the client process; `root/` in its arguments so a leak check finds it. */
function startClientProcess(root: string): ClientProcess {
  const child = fork(process.argv[1] as string, ["client", `${root}/`], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let serial = 0;
  child.on("message", (message: { id: number; result?: unknown; error?: string }) => {
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiting?.reject(new Error(message.error));
    else waiting?.resolve(message.result);
  });
  child.once("exit", (code, signal) => {
    for (const waiting of pending.values())
      waiting.reject(new Error(`client process exited (${code ?? signal})`));
    pending.clear();
  });
  return {
    run<T>(task: ClientTask): Promise<T> {
      serial += 1;
      const id = serial;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send({ id, task });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.disconnect();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The server process: the world, Ring0's stream server, the measurements.
// ---------------------------------------------------------------------------------------------

v8.setFlagsFromString("--expose-gc");
const gc = ((globalThis as { gc?: () => void }).gc ?? vm.runInNewContext("gc")) as () => void;

interface MemorySample {
  atSeconds: number;
  rssMB: number;
  heapUsedMB: number;
  streams: number;
}

async function memoryNow(): Promise<{ rssMB: number; heapUsedMB: number }> {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(50);
  }
  const usage = process.memoryUsage();
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
function memorySeries(
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

function spread(values: number[]) {
  return {
    p50: round(median(values), 2),
    min: round(Math.min(...values), 2),
    max: round(Math.max(...values), 2),
  };
}

/** inotify instances: the per-user limit, how many our uid's processes hold, how many are free. */
function inotifyHeadroom(): { limit: number; used: number; free: number } {
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

/** An operator signed in as the IAM would, and an operator-wide API token of theirs. */
async function operatorToken(
  db: Parameters<typeof tenantAdminToken>[0],
  operatorTenant: string,
): Promise<string> {
  const identity = {
    subject: `${operatorTenant}:bench-operator`,
    tenant: operatorTenant,
    name: "Bench operator",
    role: "operator" as const,
    email: null,
  };
  const row = await createUserRepository(db).recordSignIn(identity, new Date());
  const issued = await createTokenService({ db }).issueToken({
    user: { ...identity, id: row.id },
    tenant: operatorTenant,
    name: "bench",
    expiresInDays: 1,
  });
  return issued.plaintext;
}

async function main() {
  const root = await benchDir("ring0-bench-streams-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  const benchStarted = performance.now();
  const elapsed = () => Math.round((performance.now() - benchStarted) / 1000);
  const results: Record<string, unknown> = {
    measuredAt: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      memoryGiB: round(os.totalmem() / 2 ** 30),
      load1AtStart: round(os.loadavg()[0] ?? 0, 2),
    },
  };
  let failed: unknown;
  try {
    const binDir = await kubeBinaries(logger, { build: false });
    const kubectlBinary = path.join(binDir, "kubectl");
    // One state dir for the super cluster, the vn-agent PKI and the tenant control plane, as the
    // runtime's local world has it: removeLocalWorld takes them all down.
    const world = path.join(root, "world");
    cleanup.push("local world", () => removeLocalWorld(world, logger));
    const superCluster = localSuperCluster({ stateDir: world, logger, binDir });
    await superCluster.up({ nodes: 3 });
    const superConn = superCluster.connect();
    await installCrds(superConn, logger);
    say(`super cluster up (${elapsed()} s)`);

    const database = await startDatabase(path.join(root, "pg"));
    cleanup.push("postgres stop", () => database.stop());

    // The data plane as the runtime wires it for the local world (test/integration/data-plane-world.ts).
    const binder = startSimulatedPodLogs(superConn, { stateDir: world, logger });
    cleanup.push("kwok debug binder", () => binder.stop());
    const agents = await startVnAgents({
      superCluster: superConn,
      stateDir: world,
      logger,
      kubeletTls: await superCluster.kubeletClient(),
    });
    cleanup.push("vn-agents", () => agents.stop());
    await agents.ready();

    const tenant = `sm${Date.now().toString(36).slice(-5)}`;
    const provisioner = createLocalProvisioner({ stateDir: world, logger, binDir });
    await kubeRequest(superConn, {
      method: "POST",
      path: `/apis/${tenantApiVersion}/tenants`,
      body: { apiVersion: tenantApiVersion, kind: "Tenant", metadata: { name: tenant }, spec: {} },
    });
    const { access: tenantAccess, conn: admin } = await startBenchTenant(provisioner, tenant, {
      check: () => cleanup.throwIfStopping(),
    });
    await waitFor(
      "the default service account",
      async () => {
        await kubeRequest(admin, { path: `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/default` });
        return true;
      },
      { timeoutMs: 120_000, everyMs: 500 },
    );
    const directory: ControlPlaneDirectory = {
      async lookup(name) {
        return name === tenant ? { state: "ready", access: tenantAccess } : { state: "absent" };
      },
    };
    setControlPlaneDirectory(directory);
    cleanup.push("control plane directory", () => setControlPlaneDirectory(null));
    const syncer = createSyncer({
      superCluster: superConn,
      directory,
      logger,
      superPodLabels: { [SIMULATED_POD_LABEL]: "true" },
      tenantFilter: (name) => name === tenant,
    });
    cleanup.push("syncer stop", () => syncer.stop());
    await syncer.start();
    say(`tenant ${tenant} up, syncer started (${elapsed()} s)`);

    // The pods, Running on kwok nodes, their simulated logs and shells served by kwok.
    const pods = Array.from({ length: PODS }, (_, index) => `bench-${index}`);
    for (const pod of pods) {
      await kubeRequest(admin, {
        method: "POST",
        path: `/api/v1/namespaces/${NAMESPACE}/pods`,
        body: {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: pod },
          spec: { containers: [{ name: "app", image: "busybox" }] },
        },
      });
    }
    const logFiles = pods.map((pod) => simulatedPodLogFile(world, superNamespace(tenant, NAMESPACE), pod));
    await waitFor(
      "the pods Running with their logs served",
      async () => {
        cleanup.throwIfStopping();
        const list = await kubeRequest<{ items: Array<{ status?: { phase?: string } }> }>(admin, {
          path: `/api/v1/namespaces/${NAMESPACE}/pods`,
        });
        return (
          list.items.filter((pod) => pod.status?.phase === "Running").length === PODS &&
          logFiles.every((file) => fs.existsSync(file))
        );
      },
      { timeoutMs: 180_000, everyMs: 500 },
    );
    const [pod, logFile] = [pods[0] as string, logFiles[0] as string];
    say(`${PODS} pods Running (${elapsed()} s)`);

    // Ring0's stream server, as server/runtime/main.ts wires it (runtime defaults; caps raised).
    const runtime = env();
    const registry = createStreamRegistry({ perUser: 1000, perTenant: 1000 });
    const settings = {
      bufferBytes: runtime.RING0_STREAM_BUFFER_BYTES,
      idleMs: runtime.RING0_STREAM_IDLE_SECONDS * 1000,
      maxSessionMs: runtime.RING0_STREAM_MAX_SECONDS * 1000,
    };
    const handler = createUpgradeHandler({
      allowedOrigins: [],
      authenticate: authenticateStream,
      endpoints: { "/ws/logs": createLogsEndpoint(settings), "/ws/exec": createExecEndpoint(settings) },
      maxPayload: runtime.RING0_WS_MAX_PAYLOAD,
      registry,
      logger,
    });
    const server = http.createServer((_request, response) => response.writeHead(404).end());
    server.on("upgrade", (request, socket, head) => {
      if (isStreamPath(request.url)) handler.handle(request, socket, head);
      else socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanup.push("stream server", async () => {
      handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const headers = { authorization: `Bearer ${await tenantAdminToken(database.db, tenant)}` };
    const logsUrl = (target: string, tail: number) =>
      `${base}/ws/logs?source=tenant-pod&tenant=${tenant}&namespace=${NAMESPACE}&pod=${target}&tailLines=${tail}`;
    const shellUrl = (target: string) =>
      `${base}/ws/exec?source=tenant-pod&tenant=${tenant}&namespace=${NAMESPACE}&pod=${target}&shell=sh`;
    const directExec = (target: string): DirectExec => ({
      url: `${tenantAccess.server.replace(/^https:/, "wss:")}/api/v1/namespaces/${NAMESPACE}/pods/${target}/exec?command=sh&stdin=true&stdout=true&tty=true`,
      ca: tenantAccess.ca,
      cert: tenantAccess.cert,
      key: tenantAccess.key,
    });
    const kubeconfig = path.join(root, "tenant-admin.kubeconfig");
    fs.writeFileSync(kubeconfig, kubeconfigFromAccess(tenantAccess, tenant), { mode: 0o600 });
    const kubectlTarget: KubectlTarget = {
      binary: kubectlBinary,
      kubeconfig,
      cacheDir: path.join(root, "kubectl", "cache"),
      pod,
    };

    const client = startClientProcess(root);
    cleanup.push("client process", () => client.stop());
    const order = (round: number) =>
      round % 2 === 0 ? (["ring0", "kubectl"] as const) : (["kubectl", "ring0"] as const);

    // 1. Log throughput.
    const logRuns: LogsResult[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const arm of order(r)) {
        cleanup.throwIfStopping();
        const run = await client.run<LogsResult>({
          kind: "logs",
          arm,
          // Markers of one length, so both arms carry the same bytes.
          marker: `tp${r}${arm === "ring0" ? "w" : "k"}`,
          logFile,
          lines: LOG_LINES,
          ...(arm === "ring0" ? { url: logsUrl(pod, 1), headers } : { kubectl: kubectlTarget }),
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
    results.logThroughput = {
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

    // 2. seq 1000000 through exec.
    const seqRuns: SeqResult[] = [];
    const seqArms = ["ring0", "direct-tty", "kubectl"] as const;
    for (let r = 0; r < ROUNDS; r++) {
      for (let a = 0; a < seqArms.length; a++) {
        const arm = seqArms[(a + r) % seqArms.length] as (typeof seqArms)[number];
        cleanup.throwIfStopping();
        const run = await client.run<SeqResult>({
          kind: "seq",
          arm,
          count: SEQ_COUNT,
          ...(arm === "ring0" ? { url: shellUrl(pod), headers } : {}),
          ...(arm === "direct-tty" ? { direct: directExec(pod) } : {}),
          ...(arm === "kubectl" ? { kubectl: kubectlTarget } : {}),
        });
        seqRuns.push(run);
        say(`seq ${arm}: ${JSON.stringify(run)}`);
      }
    }
    const seqArm = (arm: string) => {
      const runs = seqRuns.filter((run) => run.arm === arm);
      return {
        seconds: spread(runs.map((run) => run.seconds)),
        complete: runs.every((run) => run.complete),
        lines: runs.map((run) => run.lines),
      };
    };
    const seqRing0 = seqArm("ring0");
    const seqDirect = seqArm("direct-tty");
    const seqKubectl = seqArm("kubectl");
    results.execSeq = {
      command: `seq ${SEQ_COUNT}`,
      ring0: seqRing0,
      kubectlExec: seqKubectl,
      directTtyShell: seqDirect,
      ring0ToKubectlSecondsP50: ratio(seqRing0.seconds.p50, seqKubectl.seconds.p50),
      ring0ToDirectTtySecondsP50: ratio(seqRing0.seconds.p50, seqDirect.seconds.p50),
      note: "Ring0's shell is a TTY (`echo; seq …; sleep 1; exit` typed into sh, CRLF line ends, all of it through kwok's pty); kubectl exec runs seq without one. direct-tty types the same into the same TTY shell over a WebSocket exec straight to the API server: Ring0's own share is ring0 against direct-tty. Times run from connecting (kubectl: from its start) to the last line; every arm must end with exit code 0.",
      runs: seqRuns,
    };

    // 3. Keystroke echo.
    const echo = await client.run<EchoResult>({
      kind: "echo",
      samples: ECHO_SAMPLES,
      warmup: ECHO_WARMUP,
      ring0: { url: shellUrl(pod), headers },
      direct: directExec(pod),
    });
    const echoStats = (samples: number[]) => ({
      n: samples.length,
      p50: round(percentile(samples, 50), 2),
      p99: round(percentile(samples, 99), 2),
    });
    const echoRing0 = echoStats(echo.ring0);
    const echoDirect = echoStats(echo.direct);
    results.keystrokeEchoMs = {
      ring0: echoRing0,
      directToApiServer: echoDirect,
      addedP50Ms: round(echoRing0.p50 - echoDirect.p50, 2),
      addedP99Ms: round(echoRing0.p99 - echoDirect.p99, 2),
      ratioP50: ratio(echoRing0.p50, echoDirect.p50),
    };
    say(`keystroke echo: ${JSON.stringify(results.keystrokeEchoMs)}`);

    // 4. Memory with 200 log streams and 50 shells held open.
    await waitFor("every earlier stream released", async () => registry.counts().total === 0, {
      timeoutMs: 30_000,
    });
    const idle = await memoryNow();
    say(`idle server: ${JSON.stringify(idle)} (${elapsed()} s)`);
    // A followed pod log costs the simulated kubelet (kwok, kubelet's log reader) one inotify
    // instance, and this host allows `max_user_instances` per user, shared with every other process
    // of ours (other control planes, tools). The pod log streams take what is free (less a margin);
    // the rest of the 200 follow nodes' vn-agent logs (same endpoint, flow and batching; an
    // in-process upstream), as an operator.
    const inotify = inotifyHeadroom();
    const podLogStreams = Math.max(0, Math.min(HOLD_LOG_STREAMS, inotify.free - 24));
    registerNodeLogProvider("vn-agent", vnAgentLogProvider);
    cleanup.push("node log provider", () => registerNodeLogProvider("vn-agent", null));
    const nodes = [...agents.endpoints().keys()];
    const operatorHeaders = {
      authorization: `Bearer ${await operatorToken(database.db, runtime.RING0_OPERATOR_TENANT)}`,
    };
    const opened = await client.run<HoldOpenResult>({
      kind: "hold-open",
      logUrls: Array.from({ length: podLogStreams }, (_, i) => logsUrl(pods[i % PODS] as string, 10)),
      nodeLogUrls: Array.from(
        { length: HOLD_LOG_STREAMS - podLogStreams },
        (_, i) => `${base}/ws/logs?source=vn-agent&node=${nodes[i % nodes.length]}&tailLines=10`,
      ),
      shellUrls: Array.from({ length: HOLD_SHELLS }, (_, i) => shellUrl(pods[i % PODS] as string)),
      headers,
      operatorHeaders,
      logFiles,
    });
    say(`holding ${JSON.stringify(opened)} for ${HOLD_SECONDS} s`);
    const samples: MemorySample[] = [];
    const holdStarted = performance.now();
    for (;;) {
      cleanup.throwIfStopping();
      const atSeconds = Math.round((performance.now() - holdStarted) / 1000);
      samples.push({ atSeconds, ...(await memoryNow()), streams: registry.counts().total });
      if (atSeconds >= HOLD_SECONDS) break;
      await sleep(
        Math.max(0, Math.min(SAMPLE_EVERY_MS, holdStarted + HOLD_SECONDS * 1000 - performance.now() + 5)),
      );
    }
    const closed = await client.run<HoldCloseResult>({ kind: "hold-close" });
    await waitFor("the held streams released", async () => registry.counts().total === 0, {
      timeoutMs: 30_000,
    }).catch(() => undefined);
    await sleep(2_000);
    const afterClose = { ...(await memoryNow()), streams: registry.counts().total };
    const rss = memorySeries(samples, "rssMB", { pct: 0.05, mb: 10 });
    const heap = memorySeries(samples, "heapUsedMB", { pct: 0.1, mb: 5 });
    results.memoryHeld = {
      streams: {
        podLogs: opened.logs,
        nodeLogs: opened.nodeLogs,
        shells: opened.shells,
        openSeconds: opened.openSeconds,
        inotify,
        why: "each followed pod log holds one inotify instance in kwok (kubelet's log reader); the host's per-user limit, shared with the machine's other processes, caps how many pod logs the simulated nodes can follow, so the rest of the 200 log streams follow nodes' vn-agent logs",
      },
      holdSeconds: HOLD_SECONDS,
      process:
        "the bench's server process: Ring0's stream server plus, as in the local runtime, the vn-agents and the syncer (clients run in a child process)",
      idleBeforeMB: idle,
      rssMB: rss,
      heapUsedMB: heap,
      perStreamKiB: {
        rss: round(
          ((rss.earlyPlateau - idle.rssMB) * 1024) / (opened.logs + opened.nodeLogs + opened.shells),
        ),
        heapUsed: round(
          ((heap.earlyPlateau - idle.heapUsedMB) * 1024) / (opened.logs + opened.nodeLogs + opened.shells),
        ),
      },
      noGrowth: rss.noGrowth && heap.noGrowth,
      afterCloseMB: afterClose,
      streamsHealthy: closed,
      samples,
    };
    say(`memory: ${JSON.stringify({ idle, rss, heap, afterClose, closed })}`);

    results.baselines = {
      logs: "`kubectl logs -f --tail=1 <pod>` against the tenant control plane directly (admin kubeconfig), not through the kube gateway",
      exec: "`kubectl exec <pod> -- seq 1000000` against the tenant control plane directly (admin kubeconfig)",
      echo: "a WebSocket exec (v5.channel.k8s.io, tty, sh) straight to the tenant API server with its admin client certificate",
      ring0:
        "Ring0's /ws/logs and /ws/exec in this process with a tenant admin's API token (Bearer): Ring0 → tenant API server as the user → vn-agent → kwok",
    };
    results.config = {
      rounds: ROUNDS,
      logLines: LOG_LINES,
      seqCount: SEQ_COUNT,
      echoSamples: ECHO_SAMPLES,
      holdLogStreams: HOLD_LOG_STREAMS,
      holdShells: HOLD_SHELLS,
      holdSeconds: HOLD_SECONDS,
      streamBufferBytes: settings.bufferBytes,
      version: availableVersions()[0],
    };
    const incomplete = [
      ...(logRing0.complete && logKubectl.complete ? [] : ["a log stream missed lines"]),
      ...(seqRing0.complete && seqKubectl.complete && seqDirect.complete ? [] : ["a seq run missed lines"]),
      ...(closed.unexpectedCloses.length > 0 ||
      closed.logsStillOpen < opened.logs ||
      closed.nodeLogsStillOpen < opened.nodeLogs ||
      closed.shellsStillOpen < opened.shells
        ? [`held streams closed early: ${closed.unexpectedCloses.slice(0, 3).join("; ")}`]
        : []),
    ];
    if (incomplete.length > 0) failed = new Error(`incomplete: ${incomplete.join(", ")}`);
  } catch (error) {
    failed = error;
  } finally {
    results.runtimeSeconds = elapsed();
    failed = await finishBench(cleanup, root, failed);
  }
  say(`bench ran ${elapsed()} s`);
  if (failed) {
    say(`partial figures: ${JSON.stringify(results)}`);
    throw failed;
  }
  writeResults("streams", results);
}

if (process.argv[2] === "client") clientMain();
else exitWhenDone(main());
