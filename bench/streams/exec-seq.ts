/**
 * `seq` through exec: typed into a shell through Ring0's /ws/exec (lines counted until the exit
 * frame), against the same typed into the same TTY shell over a WebSocket exec straight to the API
 * server, and against `kubectl exec <pod> -- seq`: completeness and time. `runSeq` is the client
 * process's side; `measureExecSeq` the server's.
 */
import WebSocket from "ws";
import type { ServerFrame } from "@/server/core/stream-protocol";
import { exitFromStatus } from "@/server/streams/exec-command";
import { ratio, round, say, spread } from "../lib/figures";
import type { CleanupStack } from "../lib/run";
import { type DirectExec, type KubectlTarget, kubectlProcess } from "./baselines";
import type { ClientProcess } from "./client";
import { lineSplitter, withTimeout } from "./lines";
import { ROUNDS, SEQ_COUNT } from "./sizes";

export interface SeqTask {
  kind: "seq";
  arm: "ring0" | "kubectl" | "direct-tty";
  count: number;
  url?: string;
  headers?: Record<string, string>;
  kubectl?: KubectlTarget;
  direct?: DirectExec;
}

export interface SeqResult {
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

export async function runSeq(task: SeqTask): Promise<SeqResult> {
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

/** The three arms, ROUNDS rounds rotating which goes first; each arm's spread over its runs. */
export async function measureExecSeq(options: {
  client: ClientProcess;
  cleanup: CleanupStack;
  /** ring0: the pod's /ws/exec URL with the tenant admin's headers. */
  ring0: { url: string; headers: Record<string, string> };
  direct: DirectExec;
  kubectl: KubectlTarget;
}) {
  const { client, cleanup } = options;
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
        ...(arm === "ring0" ? options.ring0 : {}),
        ...(arm === "direct-tty" ? { direct: options.direct } : {}),
        ...(arm === "kubectl" ? { kubectl: options.kubectl } : {}),
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
  return {
    command: `seq ${SEQ_COUNT}`,
    ring0: seqRing0,
    kubectlExec: seqKubectl,
    directTtyShell: seqDirect,
    ring0ToKubectlSecondsP50: ratio(seqRing0.seconds.p50, seqKubectl.seconds.p50),
    ring0ToDirectTtySecondsP50: ratio(seqRing0.seconds.p50, seqDirect.seconds.p50),
    note: "Ring0's shell is a TTY (`echo; seq …; sleep 1; exit` typed into sh, CRLF line ends, all of it through kwok's pty); kubectl exec runs seq without one. direct-tty types the same into the same TTY shell over a WebSocket exec straight to the API server: Ring0's own share is ring0 against direct-tty. Times run from connecting (kubectl: from its start) to the last line; every arm must end with exit code 0.",
    runs: seqRuns,
  };
}
