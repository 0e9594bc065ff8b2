/**
 * TLS to tenant API servers. One keep-alive agent per tenant, built from the control plane's CA and
 * admin client certificate; a changed access (rotated certificate, moved server) replaces the
 * agent. The admin material stays in these agents: nothing of it is ever written to a client.
 */
import { createHash } from "node:crypto";
import https from "node:https";

/** Admin access to an API server (a provisioner's ControlPlaneAccess has exactly this shape). */
export interface ApiServerAccess {
  server: string;
  /** PEM: the CA that signed the API server's serving certificate. */
  ca: string;
  /** PEM: admin client certificate and key. */
  cert: string;
  key: string;
}

export interface Upstream {
  agent: https.Agent;
  /** `https:` URL of the API server, any path prefix without its trailing slash. */
  url: URL;
  basePath: string;
}

function fingerprint(access: ApiServerAccess): string {
  return createHash("sha256")
    .update([access.server, access.ca, access.cert, access.key].join("\0"))
    .digest("hex");
}

function destroyIdleSockets(agent: https.Agent): void {
  for (const sockets of Object.values(agent.freeSockets))
    for (const socket of sockets ?? []) socket.destroy();
}

export class UpstreamConfigError extends Error {
  override name = "UpstreamConfigError";
}

export function createUpstreamPool(options: { maxSocketsPerTenant?: number } = {}) {
  const pool = new Map<string, { fingerprint: string; upstream: Upstream }>();
  return {
    /** The upstream of a tenant for this access; throws UpstreamConfigError for a non-HTTPS server. */
    get(tenant: string, access: ApiServerAccess): Upstream {
      const print = fingerprint(access);
      const cached = pool.get(tenant);
      if (cached?.fingerprint === print) return cached.upstream;
      // Requests in flight (watches, exec sessions) finish on the old agent; idle sockets go now.
      if (cached) destroyIdleSockets(cached.upstream.agent);
      pool.delete(tenant);
      const url = new URL(access.server);
      if (url.protocol !== "https:") {
        throw new UpstreamConfigError(`control plane server of tenant "${tenant}" is not https`);
      }
      const agent = new https.Agent({
        keepAlive: true,
        maxSockets: options.maxSocketsPerTenant ?? 256,
        ca: access.ca,
        cert: access.cert,
        key: access.key,
      });
      const upstream = { agent, url, basePath: url.pathname.replace(/\/+$/, "") };
      pool.set(tenant, { fingerprint: print, upstream });
      return upstream;
    },
    /** Forget a tenant's agent (e.g. the control plane went away). */
    drop(tenant: string): void {
      pool.get(tenant)?.upstream.agent.destroy();
      pool.delete(tenant);
    },
    close(): void {
      for (const { upstream } of pool.values()) upstream.agent.destroy();
      pool.clear();
    },
    size: () => pool.size,
  };
}

export type UpstreamPool = ReturnType<typeof createUpstreamPool>;
