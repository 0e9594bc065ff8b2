/**
 * An HTTPS listener on 127.0.0.1 (and, if asked, the pod API address) that requires a client certificate from one CA (the vn-agents and
 * the admission webhooks): it tracks its sockets so closing it ends every connection at once.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import https from "node:https";
import net from "node:net";
import type { TLSSocket } from "node:tls";
import type { Logger } from "@/server/logger";

export interface MtlsOptions {
  cert: string;
  key: string;
  /** The only CA client certificates may chain to. */
  clientCa: string;
}

export interface MtlsServer {
  server: https.Server;
  /**
   * Listen on 127.0.0.1 (`port` or a free one), and on the same port of each of `alsoOn` (the pod
   * API address, where API servers in pods reach it); resolves with the port.
   */
  listen(port?: number, alsoOn?: string[]): Promise<number>;
  close(): Promise<void>;
  /** New connections get this certificate and client CA (a renewed one), without a restart. */
  reload(tls: MtlsOptions): void;
  /** TLS connections accepted so far (clients that keep theirs alive add one, not one per request). */
  handshakes(): number;
}

export function createMtlsServer(
  tls: MtlsOptions,
  log: Logger,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): MtlsServer {
  const sockets = new Set<net.Socket>();
  /** Listeners on other addresses that hand their connections to the TLS server. */
  const extras: net.Server[] = [];
  let handshakes = 0;
  const server = https.createServer(
    {
      cert: tls.cert,
      key: tls.key,
      ca: tls.clientCa,
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: "TLSv1.2",
      // A caller that never finishes its handshake holds a socket 10 s, not the default 2 minutes.
      handshakeTimeout: 10_000,
    },
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        log.error("request failed", { error });
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    },
  );
  server.on("secureConnection", (socket: TLSSocket) => {
    handshakes += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  // Refused handshakes are said at most every 10 s, with how many: a caller dialling in a loop
  // (anything that can reach the port) must not fill the log.
  let refused = 0;
  let saidAt = 0;
  server.on("tlsClientError", (error) => {
    refused += 1;
    const now = Date.now();
    if (now - saidAt < 10_000) return;
    log.info("TLS handshake refused", { error: error.message, refused });
    saidAt = now;
    refused = 0;
  });
  return {
    server,
    handshakes: () => handshakes,
    reload: (next) =>
      server.setSecureContext({ cert: next.cert, key: next.key, ca: next.clientCa, minVersion: "TLSv1.2" }),
    listen: async (port, alsoOn = []) => {
      const bound = await new Promise<number>((resolve, reject) => {
        server.once("error", reject);
        server.listen({ host: "127.0.0.1", port: port ?? 0, exclusive: true }, () => {
          server.off("error", reject);
          resolve((server.address() as net.AddressInfo).port);
        });
      });
      try {
        for (const host of alsoOn) {
          // Same TLS server, same client CA: connections there are handed to it whole.
          const extra = net.createServer((socket) => server.emit("connection", socket));
          await new Promise<void>((resolve, reject) => {
            extra.once("error", reject);
            extra.listen({ host, port: bound, exclusive: true }, () => {
              extra.off("error", reject);
              resolve();
            });
          });
          extras.push(extra);
        }
      } catch (error) {
        for (const extra of extras.splice(0)) extra.close();
        await new Promise<void>((done) => server.close(() => done()));
        throw error;
      }
      return bound;
    },
    close: () =>
      new Promise<void>((done) => {
        for (const extra of extras.splice(0)) extra.close();
        server.close(() => done());
        for (const socket of sockets) socket.destroy();
        sockets.clear();
        server.closeAllConnections();
      }),
  };
}
