/** Exit 2: the command line itself is wrong; the message says how to fix it. */
export class UsageError extends Error {
  override name = "UsageError";
  readonly exitCode = 2;
}

/** Exit 1: the command was understood but failed (the server said no, Ring0 unreachable, a file). */
export class CommandError extends Error {
  override name = "CommandError";
  readonly exitCode = 1;
}
