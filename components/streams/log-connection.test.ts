import { describe, expect, it } from "vitest";
import {
  type ConnectionStatus,
  LogConnection,
  type LogConnectionOptions,
  type SocketLike,
} from "@/components/streams/log-connection";
import type { LogLine, ServerFrame } from "@/server/core/stream-protocol";

class FakeSocket implements SocketLike {
  sent: string[] = [];
  closed: number | undefined;
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  constructor(readonly path: string) {}
  send(data: string): void {
    this.sent.push(data);
  }
  close(code?: number): void {
    this.closed = code;
  }
  open(): void {
    this.onopen?.({} as Event);
  }
  frame(frame: ServerFrame): void {
    this.onmessage?.({ data: JSON.stringify(frame) } as MessageEvent);
  }
  lines(...lines: LogLine[]): void {
    this.frame({ type: "lines", lines });
  }
  end(code: number, reason = ""): void {
    this.onclose?.({ code, reason } as CloseEvent);
  }
}

function world(options: Partial<LogConnectionOptions> = {}) {
  const sockets: FakeSocket[] = [];
  const shown: string[] = [];
  const statuses: ConnectionStatus[] = [];
  const timers: { at: number; run: () => void }[] = [];
  let now = 0;
  const connection = new LogConnection({
    target: { source: "tenant-pod", tenant: "acme", namespace: "default", pod: "web" },
    tailLines: 100,
    onLines: (lines) => shown.push(...lines.map((line) => line.text)),
    onStatus: (status) => statuses.push(status),
    openSocket: (path) => {
      const socket = new FakeSocket(path);
      sockets.push(socket);
      return socket;
    },
    random: () => 1,
    timers: {
      setTimeout: (run, ms) => {
        const timer = { at: now + ms, run };
        timers.push(timer);
        return timer;
      },
      clearTimeout: (handle) => {
        const index = timers.indexOf(handle as (typeof timers)[number]);
        if (index !== -1) timers.splice(index, 1);
      },
      now: () => now,
    },
    ...options,
  });
  const socket = () => sockets.at(-1)!;
  const advance = (ms: number) => {
    now += ms;
    for (const timer of timers.filter((each) => each.at <= now)) {
      timers.splice(timers.indexOf(timer), 1);
      timer.run();
    }
  };
  return { connection, sockets, socket, shown, statuses, timers, advance, last: () => statuses.at(-1)! };
}

describe("LogConnection", () => {
  it("asks for the tail first and shows lines", () => {
    const { connection, socket, shown, last } = world();
    connection.start();
    expect(socket().path).toBe(
      "/ws/logs?source=tenant-pod&tenant=acme&namespace=default&pod=web&follow=1&tailLines=100",
    );
    socket().open();
    expect(last().phase).toBe("open");
    socket().lines({ ts: "2025-01-02T03:04:05.1Z", text: "a" });
    socket().frame({ type: "status", state: "following" });
    expect(shown).toEqual(["a"]);
    expect(last()).toMatchObject({ phase: "open", stream: "following" });
  });

  it("reconnects after a drop from the last line's second, without the tail, and drops what was shown", () => {
    const { connection, socket, sockets, shown, last, advance } = world();
    connection.start();
    socket().open();
    socket().lines(
      { ts: "2025-01-02T03:04:05.1Z", text: "a" },
      { ts: "2025-01-02T03:04:05.5Z", text: "b" },
      { ts: "2025-01-02T03:04:05.5Z", text: "c" },
    );
    socket().end(1006);
    expect(last()).toMatchObject({ phase: "retrying", retryAt: 500, code: 1006 });
    advance(499);
    expect(sockets).toHaveLength(1);
    advance(1);
    expect(socket().path).toBe(
      "/ws/logs?source=tenant-pod&tenant=acme&namespace=default&pod=web&follow=1&sinceTime=2025-01-02T03%3A04%3A05Z",
    );
    socket().open();
    socket().lines(
      { ts: "2025-01-02T03:04:05.1Z", text: "a" },
      { ts: "2025-01-02T03:04:05.5Z", text: "b" },
      { ts: "2025-01-02T03:04:05.5Z", text: "c" },
      { ts: "2025-01-02T03:04:05.5Z", text: "d" },
    );
    socket().lines({ ts: "2025-01-02T03:04:06Z", text: "e" });
    expect(shown).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("backs off further on repeated failures and starts over once lines flow", () => {
    const { connection, socket, last, advance } = world();
    connection.start();
    socket().open();
    socket().end(4503);
    expect(last().retryAt).toBe(500);
    advance(500);
    socket().open();
    socket().end(4502);
    expect(last().retryAt).toBe(500 + 1000);
    advance(1000);
    socket().open();
    socket().lines({ ts: "2025-01-02T03:04:05Z", text: "a" });
    socket().end(1006);
    expect(last().retryAt).toBe(1500 + 500);
  });

  it("stops on a refusal with the server's message and reconnects only when asked", () => {
    const { connection, socket, sockets, last, timers } = world();
    connection.start();
    socket().open();
    socket().frame({ type: "error", status: 403, message: 'pods "web" is forbidden' });
    socket().end(4403);
    expect(last()).toMatchObject({ phase: "closed", tone: "error", code: 4403 });
    expect(last().message).toContain('pods "web" is forbidden');
    expect(timers).toHaveLength(0);
    connection.reconnect();
    expect(sockets).toHaveLength(2);
  });

  it("gives up after attempts that never open (a refused upgrade) and says what to do", () => {
    const { connection, socket, last, advance } = world({ maxUnopenedAttempts: 3 });
    connection.start();
    socket().end(1006);
    advance(60_000);
    socket().end(1006);
    advance(60_000);
    socket().end(1006);
    expect(last().phase).toBe("closed");
    expect(last().message).toMatch(/Gave up after 3 attempts.*sign in again/);
  });

  it("sends pause and resume, and the pause again after reconnecting", () => {
    const { connection, socket, advance } = world();
    connection.start();
    socket().open();
    connection.setPaused(true);
    connection.setPaused(true);
    expect(socket().sent).toEqual(['{"type":"pause"}']);
    socket().end(1006);
    advance(500);
    socket().open();
    expect(socket().sent).toEqual(['{"type":"pause"}']);
    connection.setPaused(false);
    expect(socket().sent).toEqual(['{"type":"pause"}', '{"type":"resume"}']);
  });

  it("says when the stream ended and does not retry", () => {
    const { connection, socket, last, timers } = world();
    connection.start();
    socket().open();
    socket().frame({ type: "status", state: "ended", message: "The log ended (the container stopped)." });
    socket().end(1000, "log ended");
    expect(last()).toMatchObject({
      phase: "closed",
      tone: "info",
      message: "The log ended (the container stopped).",
    });
    expect(timers).toHaveLength(0);
  });

  it("closes its socket and cancels a pending retry when disposed", () => {
    const { connection, socket, sockets, timers, advance } = world();
    connection.start();
    socket().open();
    socket().end(1006);
    expect(timers).toHaveLength(1);
    connection.dispose();
    expect(timers).toHaveLength(0);
    advance(60_000);
    expect(sockets).toHaveLength(1);

    const other = world();
    other.connection.start();
    other.connection.dispose();
    expect(other.socket().closed).toBe(1000);
  });
});
