import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import { hasBearer, originRefusal } from "@/server/auth/origin";
import {
  type CredentialRechecks,
  createCredentialRechecks,
  type HeldCredential,
} from "@/server/auth/rechecks";
import type { SessionUser } from "@/server/core/roles";
import { closeCodes } from "@/server/core/stream-protocol";
import type { Logger } from "@/server/logger";
import type { StreamRegistry } from "./registry";

/** Who opened a stream, and how to ask again whether they still may. */
export interface StreamAuthentication {
  user: SessionUser;
  /** "session" (browser cookie) or "token" (a Ring0 API token in Authorization: Bearer). */
  method: "session" | "token";
  /** A token's tenant when the token is confined to it; null for sessions and operator-wide tokens. */
  confinedTo: string | null;
  /** The session or token, rechecked while the stream is open (server/auth/rechecks.ts). */
  credential: HeldCredential;
}

export interface StreamContext {
  user: SessionUser;
  auth: StreamAuthentication;
  url: URL;
  logger: Logger;
}

export interface StreamRefusal {
  /** 503: Ring0 cannot decide right now (sharing grants unreadable); the caller may retry. */
  status: 400 | 403 | 404 | 503;
  message: string;
}

/** One endpoint under /ws/: authorises its own stream on open and owns the socket after that. */
export interface StreamEndpoint {
  /**
   * Authorisation before the upgrade: a refusal is answered as plain HTTP (a string means 403).
   * Decide here only what needs no upstream call (who may use which source); the cluster's own
   * answer (RBAC, a missing container) arrives after the upgrade as an error frame.
   */
  authorize?(context: StreamContext): string | StreamRefusal | null | Promise<string | StreamRefusal | null>;
  /**
   * Counted streams (logs, shells) name the tenant whose share they use; they are admitted against
   * the registry's caps after the upgrade (a refusal is an error frame and close 4429).
   */
  countsAgainst?(context: StreamContext): { tenant: string; kind: string };
  /** `release` is called once when the socket closes (the registry slot and rechecks end). */
  open(socket: WebSocket, context: StreamContext): void;
}

export interface UpgradeOptions {
  allowedOrigins: string[];
  /** The caller from the upgrade's headers (session cookie or bearer token), or null (401). */
  authenticate(headers: IncomingHttpHeaders): Promise<StreamAuthentication | null>;
  endpoints: Record<string, StreamEndpoint>;
  maxPayload: number;
  keepaliveMs?: number;
  /** Where open streams' credentials are rechecked (default: the handler's own, every `recheckMs`). */
  rechecks?: CredentialRechecks;
  /** How often open streams' credentials are rechecked when the handler keeps its own (default 5 s). */
  recheckMs?: number;
  registry?: StreamRegistry;
  logger: Logger;
}

const statusText: Record<number, string> = {
  429: "Too Many Requests",
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

/** A close reason within the 123 bytes a close frame carries. */
export function closeReasonOf(text: string): string {
  let out = text;
  while (Buffer.byteLength(out) > 123) out = out.slice(0, -1);
  return out;
}

/** An `error` frame (see server/core/stream-protocol.ts), if the socket is still open. */
export function sendError(socket: WebSocket, status: number, message: string): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ type: "error", status, message }));
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
  // Streams outlive the request that opened them: their credential is asked again while they last.
  const rechecks =
    options.rechecks ?? createCredentialRechecks({ intervalMs: options.recheckMs, logger: options.logger });
  const alive = new WeakMap<WebSocket, boolean>();
  const paths = new WeakMap<WebSocket, string>();

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
    // A browser always sends Origin, and cookies ride along cross-site (the hijacking risk); a
    // bearer token is set by a program on purpose, so Origin may be absent then (but not foreign).
    const bearer = hasBearer(request.headers.authorization);
    const originProblem = originRefusal(
      { origin: request.headers.origin ?? null, referer: request.headers.referer ?? null, bearer },
      options.allowedOrigins,
    );
    if (originProblem) {
      options.logger.warn("websocket refused: origin not allowed", {
        origin: request.headers.origin,
        path: request.url,
      });
      return refuse(socket, 403, originProblem);
    }
    // A program (bearer token) reads refusals as HTTP statuses. A browser cannot: a refused upgrade
    // is only "1006" to page script. So a browser from an allowed Origin gets the same refusal as
    // an error frame and a 4000+status close, which the viewer can explain (nothing is streamed).
    const deny = (status: number, message: string) => {
      if (bearer) return refuse(socket, status, message);
      server.handleUpgrade(request, socket, head, (webSocket) => {
        webSocket.on("error", () => {});
        sendError(webSocket, status, message);
        webSocket.close(4000 + status, closeReasonOf(message));
      });
    };
    const auth = await options.authenticate(request.headers);
    if (!auth) return deny(401, "Sign in to open this stream.");
    const { user } = auth;
    const url = new URL(request.url ?? "/", "http://localhost");
    const endpoint = options.endpoints[url.pathname];
    if (!endpoint) return deny(404, `No stream at ${url.pathname}.`);
    const context: StreamContext = {
      user,
      auth,
      url,
      logger: options.logger.child({ stream: url.pathname, user: user.subject }),
    };
    const refusal = (await endpoint.authorize?.(context)) ?? null;
    if (typeof refusal === "string") return deny(403, refusal);
    if (refusal) return deny(refusal.status, refusal.message);
    server.handleUpgrade(request, socket, head, (webSocket) => {
      alive.set(webSocket, true);
      paths.set(webSocket, url.pathname);
      webSocket.on("pong", () => alive.set(webSocket, true));
      webSocket.on("error", (error) => context.logger.warn("stream error", { error }));
      const counted = endpoint.countsAgainst?.(context);
      if (counted && options.registry) {
        const admission = options.registry.admit({
          subject: user.subject,
          tenant: counted.tenant,
          kind: counted.kind,
          close: (code, reason) => {
            sendError(webSocket, code === closeCodes.sessionEnded ? 401 : 410, reason);
            webSocket.close(code, reason.slice(0, 120));
          },
        });
        if (!admission.ok) {
          context.logger.info("stream refused: limit reached", { reason: admission.message });
          sendError(webSocket, 429, admission.message);
          webSocket.close(closeCodes.tooMany, "too many streams");
          return;
        }
        webSocket.once("close", admission.release);
      }
      const release = rechecks.hold(auth.credential, user, (why) => {
        context.logger.info("stream closed: its credential no longer carries it", { why });
        // A peer that never answers the close frame would keep a closing socket (and its upstream)
        // for ws's 30 s close timeout: after a second the connection is cut.
        setTimeout(() => {
          if (webSocket.readyState !== webSocket.CLOSED) webSocket.terminate();
        }, 1_000).unref();
        if (why === "role-changed") {
          sendError(
            webSocket,
            403,
            "Your role changed since this stream opened. Reopen it to go on with the rights of your new role.",
          );
          webSocket.close(closeCodes.forbidden, "role changed");
          return;
        }
        sendError(
          webSocket,
          401,
          "Your session ended or your access was revoked. Sign in again to reconnect.",
        );
        webSocket.close(closeCodes.sessionEnded, "session ended");
      });
      webSocket.once("close", release);
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
    /** Each open socket's path and the bytes queued for it (metrics; the back-pressure tests). */
    sockets(): Array<{ path: string; bufferedAmount: number }> {
      return [...server.clients].map((socket) => ({
        path: paths.get(socket) ?? "",
        bufferedAmount: socket.bufferedAmount,
      }));
    },
    close(): void {
      clearInterval(keepalive);
      if (!options.rechecks) rechecks.close();
      for (const socket of server.clients) socket.close(1001, "server shutting down");
      server.close();
    },
  };
}
