/** Child processes for the local super cluster: argument arrays only, bounded in time, output captured. */
import { spawn } from "node:child_process";

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
