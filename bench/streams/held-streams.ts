/**
 * Server memory with many log streams and shells held open while the pods keep logging and the
 * shells keep echoing. `holdOpen` and `holdClose` are the client process's side (the streams live
 * there); `measureMemoryHeld` the server's, sampling its own memory meanwhile.
 */
import WebSocket from "ws";
import type { ServerFrame } from "@/server/core/stream-protocol";
import { vnAgentLogProvider } from "@/server/streams/node-logs";
import { registerNodeLogProvider } from "@/server/streams/sources";
import { operatorToken } from "../lib/database";
import { round, say } from "../lib/figures";
import { type CleanupStack, sleep, waitFor } from "../lib/run";
import type { ClientProcess } from "./client";
import { appendLine, lineSplitter } from "./lines";
import { inotifyHeadroom, type MemorySample, memoryNow, memorySeries } from "./memory";
import type { StreamServer } from "./server";
import { HOLD_LOG_STREAMS, HOLD_SECONDS, HOLD_SHELLS, PODS, SAMPLE_EVERY_MS } from "./sizes";
import type { StreamsWorld } from "./world";

export interface HoldOpenTask {
  kind: "hold-open";
  /** Tenant pods' logs, the shells (the tenant admin's token), nodes' vn-agent logs (an operator's). */
  logUrls: string[];
  shellUrls: string[];
  nodeLogUrls: string[];
  headers: Record<string, string>;
  operatorHeaders: Record<string, string>;
  logFiles: string[];
}

export interface HoldCloseTask {
  kind: "hold-close";
}

export interface HoldOpenResult {
  logs: number;
  nodeLogs: number;
  shells: number;
  openSeconds: number;
}

export interface HoldCloseResult {
  logsStillOpen: number;
  nodeLogsStillOpen: number;
  shellsStillOpen: number;
  fewestTickLinesPerLogStream: number;
  fewestTickEchoesPerShell: number;
  unexpectedCloses: string[];
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

export async function holdOpen(task: HoldOpenTask): Promise<HoldOpenResult> {
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

export async function holdClose(): Promise<HoldCloseResult> {
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

/**
 * HOLD_LOG_STREAMS log streams and HOLD_SHELLS shells held open for HOLD_SECONDS: the server's RSS
 * and heapUsed after a full GC every SAMPLE_EVERY_MS, against the idle server before.
 */
export async function measureMemoryHeld(options: {
  client: ClientProcess;
  cleanup: CleanupStack;
  world: StreamsWorld;
  server: StreamServer;
  elapsed: () => number;
}) {
  const { client, cleanup, world, server } = options;
  const { registry } = server;
  await waitFor("every earlier stream released", async () => registry.counts().total === 0, {
    timeoutMs: 30_000,
  });
  const idle = await memoryNow();
  say(`idle server: ${JSON.stringify(idle)} (${options.elapsed()} s)`);
  // A followed pod log costs the simulated kubelet (kwok, kubelet's log reader) one inotify
  // instance, and this host allows `max_user_instances` per user, shared with every other process
  // of ours (other control planes, tools). The pod log streams take what is free (less a margin);
  // the rest of the 200 follow nodes' vn-agent logs (same endpoint, flow and batching; an
  // in-process upstream), as an operator.
  const inotify = inotifyHeadroom();
  const podLogStreams = Math.max(0, Math.min(HOLD_LOG_STREAMS, inotify.free - 24));
  registerNodeLogProvider("vn-agent", vnAgentLogProvider);
  cleanup.push("node log provider", () => registerNodeLogProvider("vn-agent", null));
  const nodes = world.nodes();
  const operatorHeaders = {
    authorization: `Bearer ${await operatorToken(world.database.db, server.runtime.RING0_OPERATOR_TENANT)}`,
  };
  const opened = await client.run<HoldOpenResult>({
    kind: "hold-open",
    logUrls: Array.from({ length: podLogStreams }, (_, i) =>
      server.logsUrl(world.pods[i % PODS] as string, 10),
    ),
    nodeLogUrls: Array.from(
      { length: HOLD_LOG_STREAMS - podLogStreams },
      (_, i) => `${server.base}/ws/logs?source=vn-agent&node=${nodes[i % nodes.length]}&tailLines=10`,
    ),
    shellUrls: Array.from({ length: HOLD_SHELLS }, (_, i) => server.shellUrl(world.pods[i % PODS] as string)),
    headers: server.headers,
    operatorHeaders,
    logFiles: world.logFiles,
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
  const result = {
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
      rss: round(((rss.earlyPlateau - idle.rssMB) * 1024) / (opened.logs + opened.nodeLogs + opened.shells)),
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
  return result;
}

/** Held streams that closed early: none may, or the run is incomplete. */
export function closedEarly(held: {
  streams: { podLogs: number; nodeLogs: number; shells: number };
  streamsHealthy: HoldCloseResult;
}): boolean {
  const closed = held.streamsHealthy;
  return (
    closed.unexpectedCloses.length > 0 ||
    closed.logsStillOpen < held.streams.podLogs ||
    closed.nodeLogsStillOpen < held.streams.nodeLogs ||
    closed.shellsStillOpen < held.streams.shells
  );
}
