import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { SessionUser } from "@/server/auth/roles";
import type { Logger } from "@/server/logger";

export interface StreamContext {
  user: SessionUser;
  url: URL;
  logger: Logger;
}

/** One endpoint under /ws/: authorises its own stream on open and owns the socket after that. */
export interface StreamEndpoint {
  /** Extra authorisation for this stream; return a refusal message to deny with 403. */
  authorize?(context: StreamContext): string | null | Promise<string | null>;
  open(socket: WebSocket, context: StreamContext): void;
}

export interface UpgradeOptions {
  allowedOrigins: string[];
  authenticate(cookieHeader: string | undefined): Promise<SessionUser | null>;
  endpoints: Record<string, StreamEndpoint>;
  maxPayload: number;
  keepaliveMs?: number;
  logger: Logger;
}

const statusText: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
};

/** Refuses an upgrade with a plain HTTP response a client (and a test) can read. */
function refuse(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ error: message });
  socket.end(
    `HTTP/1.1 ${status} ${statusText[status] ?? "Error"}\r\n` +
      "Connection: close\r\nContent-Type: application/json\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export function isStreamPath(url: string | undefined): boolean {
  return typeof url === "string" && (url === "/ws" || url.startsWith("/ws/"));
}

/**
 * Handles upgrades under /ws/: Origin against the allow-list (403), session cookie (401),
 * endpoint lookup (404), per-stream authorisation (403), then keepalive pings so idle streams
 * survive proxies and dead peers are dropped. Each socket fails alone.
 */
export function createUpgradeHandler(options: UpgradeOptions) {
  const server = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload });
  const keepaliveMs = options.keepaliveMs ?? 25_000;
  const alive = new WeakMap<WebSocket, boolean>();

  const keepalive = setInterval(() => {
    for (const socket of server.clients) {
      if (alive.get(socket) === false) {
        socket.terminate();
        continue;
      }
      alive.set(socket, false);
      socket.ping();
    }
  }, keepaliveMs);
  keepalive.unref();

  async function handle(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on("error", () => socket.destroy());
    const origin = request.headers.origin;
    if (!origin || !options.allowedOrigins.includes(origin)) {
      options.logger.warn("websocket refused: origin not allowed", { origin, path: request.url });
      return refuse(socket, 403, "Origin not allowed.");
    }
    const user = await options.authenticate(request.headers.cookie);
    if (!user) return refuse(socket, 401, "Sign in to open this stream.");
    const url = new URL(request.url ?? "/", "http://localhost");
    const endpoint = options.endpoints[url.pathname];
    if (!endpoint) return refuse(socket, 404, `No stream at ${url.pathname}.`);
    const context: StreamContext = {
      user,
      url,
      logger: options.logger.child({ stream: url.pathname, user: user.subject }),
    };
    const refusal = (await endpoint.authorize?.(context)) ?? null;
    if (refusal) return refuse(socket, 403, refusal);
    server.handleUpgrade(request, socket, head, (webSocket) => {
      alive.set(webSocket, true);
      webSocket.on("pong", () => alive.set(webSocket, true));
      webSocket.on("error", (error) => context.logger.warn("stream error", { error }));
      try {
        endpoint.open(webSocket, context);
      } catch (error) {
        context.logger.error("stream failed to open", { error });
        webSocket.close(1011, "stream failed to open");
      }
    });
  }

  return {
    handle(request: IncomingMessage, socket: Duplex, head: Buffer): void {
      handle(request, socket, head).catch((error) => {
        options.logger.error("websocket upgrade failed", { error });
        if (!socket.destroyed) refuse(socket, 400, "Upgrade failed.");
      });
    },
    close(): void {
      clearInterval(keepalive);
      for (const socket of server.clients) socket.close(1001, "server shutting down");
      server.close();
    },
  };
}
