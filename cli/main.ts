/**
 * `ring0`: Ring0 from a terminal. Exit codes: 0 done, 1 the command failed (the server's message on
 * one line), 2 the command line is wrong.
 */
import { parseCommandLine } from "./args";
import { describeClientError, oneLine } from "./client";
import { type CommandIo, resolveConnection, runCommand } from "./commands";
import { CommandError, UsageError } from "./errors";

export interface CliIo extends CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let url = "Ring0";
  try {
    const parsed = parseCommandLine(argv);
    if (parsed.kind === "help") {
      io.stdout(parsed.text);
      return 0;
    }
    url = parsed.global.url ?? io.env.RING0_URL ?? safeUrl(parsed.global, io) ?? url;
    const { stdout } = await runCommand(parsed, io);
    io.stdout(stdout);
    return 0;
  } catch (error) {
    const failure =
      error instanceof UsageError || error instanceof CommandError ? error : describeClientError(error, url);
    if (failure) {
      io.stderr(`ring0: ${oneLine(failure.message)}\n`);
      return failure.exitCode;
    }
    io.stderr(`ring0: ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
    return 1;
  }
}

function safeUrl(global: Parameters<typeof resolveConnection>[0], io: CommandIo): string | undefined {
  try {
    return resolveConnection(global, io).url;
  } catch {
    return undefined;
  }
}

async function readPipedStdin(): Promise<string | null> {
  if (process.stdin.isTTY) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const invokedDirectly = process.argv[1] && /cli[\\/]main\.ts$/.test(process.argv[1]);
if (invokedDirectly) {
  runCli(process.argv.slice(2), {
    env: process.env,
    readStdin: readPipedStdin,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  }).then((code) => {
    process.exitCode = code;
  });
}
