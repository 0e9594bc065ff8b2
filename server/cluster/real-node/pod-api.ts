/**
 * Where pods reach an API server on this host: a tenant's own pods their tenant's (issue 18,
 * server/provisioners/local), Ring0's own pods the super cluster's (./super-api-proxy.ts). Ring0
 * listens on the host's pod API address (POD_API_ADDRESS, on `lo`) at the API server's own port,
 * and splices each connection to the API server on 127.0.0.1. Bytes pass untouched: TLS is the API
 * server's own (its certificate names POD_API_ADDRESS), and the pod authenticates with its own
 * token, as in a cluster of its own. The API server advertises this address, so its `kubernetes`
 * Service's endpoints lead here too.
 *
 * The walls: the host's firewall lets pods reach only sockets bound to exactly this address; this
 * listener admits only the running pods of its owner (asked of the super cluster at each
 * connection, as the egress wall asks of a dialled pod IP), so anyone else's pods cannot even start
 * a TLS handshake with it; and it holds a bounded number of connections.
 */
import net from "node:net";
import type { Logger } from "@/server/logger";

export interface PodApiListener {
  host: string;
  port: number;
  close(): Promise<void>;
}

export interface PodApiListenerOptions {
  /** Whose pods may connect: a tenant's name, or "ring0" for Ring0's own (for logs). */
  owner: string;
  /** Where pods connect (POD_API_ADDRESS) and on which port (the tenant API server's). */
  host: string;
  port: number;
  /** The tenant API server on 127.0.0.1. */
  upstreamPort: number;
  /** Whether `ip` is a running pod of the owner right now (e.g. egress-policy.ts's isTenantPodIp). */
  isTenantPod: (ip: string) => Promise<boolean>;
  logger: Logger;
  /** Pods' connections held at once (default 512), and from one address (default 64). */
  maxConnections?: number;
  maxPerSource?: number;
}

function plainIpv4(address: string | undefined): string {
  return (address ?? "").replace(/^::ffff:/, "");
}

/** Two sockets spliced: each end's close closes the other once what it sent is flushed. */
function splice(a: net.Socket, b: net.Socket): void {
  a.pipe(b);
  b.pipe(a);
  const closeOther = (other: net.Socket) => () => {
    if (!other.destroyed) other.end();
    setTimeout(() => other.destroy(), 5_000).unref();
  };
  a.once("close", closeOther(b));
  b.once("close", closeOther(a));
  a.on("error", () => a.destroy());
  b.on("error", () => b.destroy());
}

export async function startPodApiListener(options: PodApiListenerOptions): Promise<PodApiListener> {
  const log = options.logger.child({ component: "pod-api", owner: options.owner });
  const maxConnections = options.maxConnections ?? 512;
  const maxPerSource = options.maxPerSource ?? 64;
  /** Every socket (pods' and upstream), to close them all with the listener. */
  const sockets = new Set<net.Socket>();
  /** Pods' connections held, by source address. */
  const held = new Map<string, number>();
  let clients = 0;

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    const source = plainIpv4(client.remoteAddress);
    const fromSource = held.get(source) ?? 0;
    if (clients >= maxConnections || fromSource >= maxPerSource) {
      client.destroy();
      return;
    }
    clients++;
    held.set(source, fromSource + 1);
    sockets.add(client);
    client.once("close", () => {
      sockets.delete(client);
      clients--;
      const left = (held.get(source) ?? 1) - 1;
      if (left > 0) held.set(source, left);
      else held.delete(source);
    });
    client.on("error", () => client.destroy());
    client.setTimeout(10_000, () => client.destroy());
    options
      .isTenantPod(source)
      .catch((error: unknown) => {
        log.warn("could not tell whose pod connected; refused", {
          source,
          error: error instanceof Error ? error.message : String(error),
        });
        return false;
      })
      .then((admitted) => {
        if (client.destroyed) return;
        if (!admitted) {
          client.destroy();
          return;
        }
        const upstream = net.connect(options.upstreamPort, "127.0.0.1");
        sockets.add(upstream);
        upstream.once("close", () => sockets.delete(upstream));
        upstream.once("connect", () => {
          client.setTimeout(0);
          splice(client, upstream);
          client.resume();
        });
        upstream.once("error", () => client.destroy());
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: options.host, port: options.port, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as net.AddressInfo).port;
  log.info("pods reach their API server here", { address: `${options.host}:${port}` });

  return {
    host: options.host,
    port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
