/**
 * The kube gateway's own HTTPS listener: kubectl sends bearer tokens only over TLS. It serves the
 * gateway and nothing else (any other path is a 404 Status, the portal stays on PORT).
 */
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { Logger } from "@/server/logger";
import type { KubeGateway } from "./gateway";
import { isGatewayPath, isUnprefixedApiPath } from "./path";
import { sendStatus, statusOnSocket } from "./status";

export interface GatewayListenerOptions {
  gateway: Pick<KubeGateway, "handleRequest" | "handleUpgrade">;
  tls: { cert: string; key: string };
  port: number;
  host?: string;
  /**
   * Called every `reloadEveryMs` (default 12 h): new material replaces the served certificate for
   * new connections (a renewed serving certificate without a restart); undefined keeps it.
   */
  reload?: () => Promise<{ cert: string; key: string } | undefined>;
  reloadEveryMs?: number;
  logger?: Logger;
}

export interface GatewayListener {
  /** The port actually bound (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

const notGateway = "Not found: this port serves only Ring0's kube gateway (/k8s/tenants/<tenant>).";

/**
 * `/k8s/` on the portal's plain HTTP port: refused (421) with the TLS URL to use instead. A bearer
 * token must never cross a network in clear text, and kubectl would not send one there anyway; a
 * TLS-terminating proxy forwards `/k8s/` to the gateway's own TLS port.
 */
export function refuseGatewayOverPlainHttp(
  gatewayUrl: string,
): Pick<KubeGateway, "handleRequest" | "handleUpgrade"> {
  const message = (url: string | undefined) => {
    const path = (url ?? "/k8s/").split("?")[0]?.slice(0, 200) ?? "/k8s/";
    return `The kube gateway is served over TLS only: use ${gatewayUrl}${path} (this port serves the portal).`;
  };
  return {
    handleRequest(request, response) {
      sendStatus(response, 421, message(request.url));
      request.resume();
    },
    handleUpgrade(request, socket) {
      socket.on("error", () => socket.destroy());
      socket.end(statusOnSocket(421, message(request.url)));
    },
  };
}

/** Listens (rejecting with the listen error, e.g. EADDRINUSE) and serves the gateway over TLS. */
export async function startGatewayListener(options: GatewayListenerOptions): Promise<GatewayListener> {
  const { gateway, logger } = options;
  const server = https.createServer({ cert: options.tls.cert, key: options.tls.key }, (request, response) => {
    if (isGatewayPath(request.url) || isUnprefixedApiPath(request.url))
      gateway.handleRequest(request, response);
    else sendStatus(response, 404, notGateway);
  });
  server.on("upgrade", (request, socket, head) => {
    if (isGatewayPath(request.url) || isUnprefixedApiPath(request.url))
      gateway.handleUpgrade(request, socket, head);
    else socket.end(statusOnSocket(404, notGateway));
  });
  server.on("tlsClientError", (error) => logger?.debug("TLS handshake failed", { error: error.message }));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (error) => logger?.error("kube gateway listener failed", { error }));

  let timer: NodeJS.Timeout | undefined;
  if (options.reload) {
    const reload = options.reload;
    timer = setInterval(
      () => {
        reload()
          .then((material) => {
            if (material) server.setSecureContext({ cert: material.cert, key: material.key });
          })
          .catch((error: unknown) =>
            logger?.warn("reloading the kube gateway's certificate failed", { error }),
          );
      },
      options.reloadEveryMs ?? 12 * 60 * 60 * 1000,
    );
    timer.unref();
  }

  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        if (timer) clearInterval(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
