/**
 * One log stream over `/ws/logs`, kept alive: it reconnects with backoff after network drops and
 * upstream failures, and resumes from the last line's timestamp without gaps or duplicates
 * (stream-protocol.ts's resume point). Refusals stop it with the server's reason. No React here; the
 * socket factory and timers are injected so tests drive it with a fake socket and clock.
 */
import { closeOutcome, type ErrorFrame, reconnectDelay } from "@/components/streams/stream-close";
import {
  advanceResumePoint,
  type ClientFrame,
  dropSeen,
  type LogLine,
  logStreamPath,
  type ResumePoint,
  resumeSinceTime,
  type ServerFrame,
  type StreamSource,
} from "@/server/core/stream-protocol";

/** What a log view reads: the query fields other than follow / tail / since, which the view sets. */
export interface LogTarget {
  source: StreamSource;
  tenant?: string;
  namespace?: string;
  pod?: string;
  container?: string;
  node?: string;
  previous?: boolean;
}

/** The part of a WebSocket this uses (the browser's WebSocket fits). */
export interface SocketLike {
  send(data: string | ArrayBufferLike | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: Event) => void) | null;
  onmessage: ((event: MessageEvent) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  onerror: ((event: Event) => void) | null;
}

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
};

export type ConnectionPhase = "connecting" | "open" | "retrying" | "closed";

export interface ConnectionStatus {
  phase: ConnectionPhase;
  /** The server's word on the stream while open. */
  stream?: "following" | "paused" | "ended";
  /** Why it closed or is retrying, in words. */
  message?: string;
  tone: "info" | "error";
  /** When the next attempt starts (epoch ms), while retrying. */
  retryAt?: number;
  code?: number;
}

export interface LogConnectionOptions {
  target: LogTarget;
  follow?: boolean;
  tailLines?: number;
  sinceTime?: string;
  paused?: boolean;
  onLines(lines: LogLine[]): void;
  onStatus(status: ConnectionStatus): void;
  openSocket(path: string): SocketLike;
  timers?: Timers;
  random?: () => number;
  /** Consecutive attempts that never opened before giving up (a refused upgrade looks like that). */
  maxUnopenedAttempts?: number;
}

export class LogConnection {
  private readonly options: LogConnectionOptions;
  private readonly timers: Timers;
  private socket: SocketLike | undefined;
  private retryTimer: unknown;
  private attempt = 0;
  private unopened = 0;
  private paused: boolean;
  private disposed = false;
  private resumePoint: ResumePoint | undefined;
  /** The phase last reported. */
  phase: ConnectionPhase = "connecting";

  constructor(options: LogConnectionOptions) {
    this.options = options;
    this.timers = options.timers ?? realTimers;
    this.paused = options.paused ?? false;
  }

  start(): void {
    this.connect();
  }

  /** Reconnect now (the person asked): resumes after the last line shown. */
  reconnect(): void {
    if (this.disposed) return;
    this.attempt = 0;
    this.unopened = 0;
    this.connect();
  }

  setPaused(paused: boolean): void {
    if (this.paused === paused) return;
    this.paused = paused;
    this.send({ type: paused ? "pause" : "resume" });
  }

  dispose(): void {
    this.disposed = true;
    this.timers.clearTimeout(this.retryTimer);
    this.drop();
  }

  /** The query path of the next attempt: from the resume point if lines were shown, else as asked. */
  nextPath(): string {
    const { target, follow = true, tailLines, sinceTime } = this.options;
    const point = this.resumePoint;
    return logStreamPath(
      point
        ? { ...target, follow, sinceTime: resumeSinceTime(point) }
        : { ...target, follow, tailLines, sinceTime },
    );
  }

  private report(status: ConnectionStatus): void {
    this.phase = status.phase;
    this.options.onStatus(status);
  }

  private send(frame: ClientFrame): void {
    try {
      this.socket?.send(JSON.stringify(frame));
    } catch {
      // Not open yet: the open handler sends the pause state.
    }
  }

  private drop(): void {
    const socket = this.socket;
    this.socket = undefined;
    if (!socket) return;
    socket.onopen = socket.onmessage = socket.onerror = socket.onclose = null;
    try {
      socket.close(1000, "closed by the viewer");
    } catch {
      // Already closed.
    }
  }

  private connect(): void {
    this.timers.clearTimeout(this.retryTimer);
    this.drop();
    if (this.disposed) return;
    const resumeFrom = this.resumePoint;
    const skipped = { skippedAtTs: 0 };
    let opened = false;
    let ended = false;
    let endMessage: string | undefined;
    let error: ErrorFrame | undefined;
    let stream: ConnectionStatus["stream"];
    this.report({ phase: "connecting", tone: "info" });
    const socket = this.options.openSocket(this.nextPath());
    this.socket = socket;

    socket.onopen = () => {
      opened = true;
      this.unopened = 0;
      if (this.paused) this.send({ type: "pause" });
      this.report({ phase: "open", tone: "info", stream });
    };
    socket.onmessage = (event) => {
      if (typeof event.data !== "string") return;
      let frame: ServerFrame;
      try {
        frame = JSON.parse(event.data) as ServerFrame;
      } catch {
        return;
      }
      if (frame.type === "lines") {
        this.attempt = 0;
        const fresh = resumeFrom ? dropSeen(resumeFrom, frame.lines, skipped) : frame.lines;
        if (fresh.length === 0) return;
        this.resumePoint = advanceResumePoint(this.resumePoint, fresh);
        this.options.onLines(fresh);
      } else if (frame.type === "status") {
        this.attempt = 0;
        stream = frame.state;
        if (frame.state === "ended") {
          ended = true;
          endMessage = frame.message;
        }
        this.report({ phase: "open", tone: "info", stream, message: frame.message });
      } else if (frame.type === "error") {
        error = { status: frame.status, message: frame.message };
      }
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      if (!opened) this.unopened++;
      const outcome = closeOutcome(event.code, event.reason, {
        error,
        opened,
        ended,
        endMessage,
        subject: "logs",
      });
      const maxUnopened = this.options.maxUnopenedAttempts ?? 4;
      if (outcome.retry && !this.disposed && this.unopened < maxUnopened) {
        const delay = reconnectDelay(this.attempt++, this.options.random);
        const retryAt = this.timers.now() + delay;
        this.report({
          phase: "retrying",
          tone: outcome.tone,
          message: outcome.message,
          retryAt,
          code: event.code,
        });
        this.retryTimer = this.timers.setTimeout(() => this.connect(), delay);
        return;
      }
      const message =
        outcome.retry && this.unopened >= maxUnopened
          ? `${outcome.message} Gave up after ${this.unopened} attempts; if you were signed out, sign in again.`
          : outcome.message;
      this.report({ phase: "closed", tone: outcome.tone, message, code: event.code });
    };
    socket.onerror = () => {
      // Always followed by close, which says what happened.
    };
  }
}
