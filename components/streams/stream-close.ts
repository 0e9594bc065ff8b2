/**
 * What the browser makes of a stream's end: a message a person can act on, and whether to
 * reconnect on its own. Refusals (bad request, signed out, forbidden, not found, too many streams)
 * are final until the person acts; network drops and upstream failures are retried with backoff.
 * Pure; unit-tested.
 */
import { closeCodes } from "@/server/core/stream-protocol";

export interface ErrorFrame {
  status: number;
  message: string;
}

export interface CloseOutcome {
  /** Reconnect automatically (with backoff). */
  retry: boolean;
  message: string;
  tone: "info" | "error";
}

export interface CloseContext {
  /** The `error` frame the server sent before closing, if any. */
  error?: ErrorFrame;
  /** Whether the socket opened (a refused upgrade closes with 1006 before opening). */
  opened: boolean;
  /** What is being streamed, for the messages: "logs" or "shell". */
  subject: "logs" | "shell";
  /** The server said the stream ended (a log stream with no more lines). */
  ended?: boolean;
  /** What the server said with the end, if anything. */
  endMessage?: string;
}

export function closeOutcome(code: number, reason: string, context: CloseContext): CloseOutcome {
  const { error, opened, subject } = context;
  const said = error?.message || reason;
  const because = said ? `: ${said.replace(/[.!?]?$/, ".")}` : ".";
  switch (code) {
    case closeCodes.badRequest:
      return { retry: false, tone: "error", message: `The server refused the request${because}` };
    case closeCodes.sessionEnded:
      return {
        retry: false,
        tone: "error",
        message: `Your session has ended${because} Sign in again to open ${subject === "logs" ? "logs" : "a shell"}.`,
      };
    case closeCodes.forbidden:
      return {
        retry: false,
        tone: "error",
        message: `You may not ${subject === "logs" ? "read these logs" : "open a shell here"}${because}`,
      };
    case closeCodes.notFound:
      return { retry: false, tone: "error", message: `Not found${because}` };
    case closeCodes.idle:
      return { retry: false, tone: "info", message: "Closed after being idle. Reconnect to continue." };
    case closeCodes.maxDuration:
      return {
        retry: false,
        tone: "info",
        message: "Closed at the maximum session length. Reconnect to continue.",
      };
    case closeCodes.tooMany:
      return {
        retry: false,
        tone: "error",
        message: `Too many open streams${because} Close another log view or shell, then reconnect.`,
      };
    case closeCodes.upstream:
      return { retry: true, tone: "error", message: `The upstream stream failed${because}` };
    case closeCodes.unavailable:
      return { retry: true, tone: "error", message: `The stream is unavailable for now${because}` };
    case 1000:
    case 1005:
      if (subject === "shell") return { retry: false, tone: "info", message: "The shell session closed." };
      return {
        retry: false,
        tone: "info",
        message: context.ended
          ? (context.endMessage ?? "The log stream ended.")
          : `The server closed the log stream${because}`,
      };
    case 1001:
      return { retry: true, tone: "info", message: "The server is restarting." };
    case 1006:
      return opened
        ? { retry: true, tone: "error", message: "The connection was lost." }
        : {
            retry: true,
            tone: "error",
            message: "Could not open the stream (the server is unreachable or refused the connection).",
          };
    case 1008:
    case 1009:
      return { retry: false, tone: "error", message: `The server refused the stream${because}` };
    case 1011:
      return { retry: true, tone: "error", message: `The server failed${because}` };
    default:
      if (code >= 4000 && code < 4500)
        return { retry: false, tone: "error", message: `Refused (${code - 4000})${because}` };
      return { retry: true, tone: "error", message: `The stream closed (${code})${because}` };
  }
}

/** Exponential backoff with jitter: ~0.5 s, 1 s, 2 s … capped at 30 s. */
export function reconnectDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(30_000, 500 * 2 ** Math.max(0, attempt));
  return Math.round(base * (0.5 + random() / 2));
}
