/**
 * The client process: every stream client and kubectl runs here, never in the server's process,
 * so the server's memory and CPU figures are the server's alone. It is this script again, started
 * with `client` (bench/streams.ts), taking tasks over IPC and answering with their results.
 */
import { fork } from "node:child_process";
import { killKubectlProcesses } from "./baselines";
import { runSeq, type SeqTask } from "./exec-seq";
import { type HoldCloseTask, type HoldOpenTask, holdClose, holdOpen } from "./held-streams";
import { type EchoTask, runEcho } from "./keystroke-echo";
import { type LogsTask, runLogs } from "./log-throughput";

export type ClientTask = LogsTask | SeqTask | EchoTask | HoldOpenTask | HoldCloseTask;

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

export function clientMain(): void {
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
    killKubectlProcesses();
  });
}

export interface ClientProcess {
  run<T>(task: ClientTask): Promise<T>;
  stop(): Promise<void>;
}

/** This script again as the client process; `root/` in its arguments so a leak check finds it. */
export function startClientProcess(root: string): ClientProcess {
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
