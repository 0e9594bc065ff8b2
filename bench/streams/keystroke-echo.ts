/**
 * Keystroke echo: one byte sent → its echo received, p50/p99, through Ring0's /ws/exec against a
 * WebSocket exec (v5.channel.k8s.io) straight to the tenant's API server with its admin
 * credentials, samples interleaved; the added milliseconds. `runEcho` is the client process's
 * side; `measureKeystrokeEcho` the server's.
 */
import WebSocket from "ws";
import type { ServerFrame } from "@/server/core/stream-protocol";
import { percentile, ratio, round, say } from "../lib/figures";
import { sleep } from "../lib/run";
import type { DirectExec } from "./baselines";
import type { ClientProcess } from "./client";
import { withTimeout } from "./lines";
import { ECHO_SAMPLES, ECHO_WARMUP } from "./sizes";

export interface EchoTask {
  kind: "echo";
  samples: number;
  warmup: number;
  ring0: { url: string; headers: Record<string, string> };
  direct: DirectExec;
}

export interface EchoResult {
  ring0: number[];
  direct: number[];
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

export async function runEcho(task: EchoTask): Promise<EchoResult> {
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

export async function measureKeystrokeEcho(
  client: ClientProcess,
  ring0: { url: string; headers: Record<string, string> },
  direct: DirectExec,
) {
  const echo = await client.run<EchoResult>({
    kind: "echo",
    samples: ECHO_SAMPLES,
    warmup: ECHO_WARMUP,
    ring0,
    direct,
  });
  const echoStats = (samples: number[]) => ({
    n: samples.length,
    p50: round(percentile(samples, 50), 2),
    p99: round(percentile(samples, 99), 2),
  });
  const echoRing0 = echoStats(echo.ring0);
  const echoDirect = echoStats(echo.direct);
  const result = {
    ring0: echoRing0,
    directToApiServer: echoDirect,
    addedP50Ms: round(echoRing0.p50 - echoDirect.p50, 2),
    addedP99Ms: round(echoRing0.p99 - echoDirect.p99, 2),
    ratioP50: ratio(echoRing0.p50, echoDirect.p50),
  };
  say(`keystroke echo: ${JSON.stringify(result)}`);
  return result;
}
