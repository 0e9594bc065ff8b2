/**
 * The egress wall of local tenant control planes, first part (issue 23): a tenant's kube-apiserver
 * sends its `controlplane` egress — every webhook configured by `url` (CRD conversion webhooks,
 * admission webhooks), and the token/authorization/audit webhooks it has none of — through an HTTP
 * CONNECT proxy on a Unix socket of its own (`--egress-selector-config-file`), which Ring0 runs.
 * The proxy knows the tenant by the socket, never dials a name, and lets through only what the
 * policy allows: for now Ring0's own webhook server (the quota webhook). Everything else — Ring0's
 * host ports, other tenants, the super cluster, link-local and metadata addresses, a closed port —
 * gets the same answer, 403, without a connection being made: the tenant learns nothing about
 * what is behind an address. Service-based webhooks, aggregated APIs, pods/services proxy and the
 * kubelet client use the `cluster` egress, which this part does not route yet.
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { getWebhookEndpoint } from "@/server/admission/registration";
import type { Logger } from "@/server/logger";

/**
 * Where a tenant's apiserver finds its egress proxy (`<stateDir>/egress/<tenant>.sock`, outside the
 * tenant's dir, which a re-create removes), and the file in its dir that tells it so.
 */
export function egressPaths(dir: string): { socket: string; config: string } {
  const tenantsDir = path.dirname(dir);
  return {
    socket: path.join(path.dirname(tenantsDir), "egress", `${path.basename(dir)}.sock`),
    config: path.join(dir, "egress-selector.yaml"),
  };
}

/** kube-apiserver's EgressSelectorConfiguration: the `controlplane` egress through the proxy. */
export function egressSelectorConfig(socket: string): string {
  return [
    "apiVersion: apiserver.k8s.io/v1beta1",
    "kind: EgressSelectorConfiguration",
    "egressSelections:",
    "  - name: controlplane",
    "    connection:",
    "      proxyProtocol: HTTPConnect",
    "      transport:",
    "        uds:",
    `          udsName: ${JSON.stringify(socket)}`,
    "",
  ].join("\n");
}

/** The target of a CONNECT request line ("CONNECT 10.0.0.1:443 HTTP/1.1"), or undefined. */
export function connectTarget(requestLine: string): { host: string; port: number } | undefined {
  const match = /^CONNECT (\S+) HTTP\/1\.[01]$/.exec(requestLine);
  if (!match?.[1]) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${match[1]}`);
  } catch {
    return undefined;
  }
  const port = Number(url.port);
  if (!Number.isInteger(port) || port < 1 || port > 65_535 || url.pathname !== "/" || url.username)
    return undefined;
  return { host: url.hostname.replace(/^\[(.*)\]$/, "$1"), port };
}

/** What a tenant's control plane may dial: exactly Ring0's own webhook server, by address. */
export function allowedEgress(target: { host: string; port: number }): boolean {
  const endpoint = getWebhookEndpoint();
  if (!endpoint) return false;
  const allowed = new URL(endpoint.baseUrl);
  const host = allowed.hostname.replace(/^\[(.*)\]$/, "$1");
  return target.host === host && target.port === Number(allowed.port || 443);
}

const REFUSED = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const BAD_REQUEST = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const MAX_HEADER_BYTES = 8 * 1024;

export interface EgressProxy {
  close(): Promise<void>;
}

/** Serves one tenant's egress on its socket (a stale socket file is replaced). */
export async function startEgressProxy(options: {
  tenant: string;
  socket: string;
  logger: Logger;
  allows?: (target: { host: string; port: number }) => boolean;
}): Promise<EgressProxy> {
  const allows = options.allows ?? allowedEgress;
  const log = options.logger.child({ component: "egress", tenant: options.tenant });
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    client.setTimeout(30_000, () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > MAX_HEADER_BYTES) client.end(BAD_REQUEST);
        return;
      }
      client.off("data", onData);
      client.pause();
      const requestLine = head.subarray(0, head.indexOf("\r\n")).toString("latin1");
      const rest = head.subarray(end + 4);
      const target = connectTarget(requestLine);
      if (!target) {
        client.end(BAD_REQUEST);
        return;
      }
      if (!allows(target)) {
        // One answer for every refused address, and no connection made: nothing is learnt.
        log.warn("egress refused", { target: `${target.host}:${target.port}` });
        client.end(REFUSED);
        return;
      }
      const upstream = net.connect(target.port, target.host);
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      upstream.once("connect", () => {
        client.setTimeout(0);
        client.write("HTTP/1.1 200 Connection established\r\n\r\n");
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      upstream.on("error", () => {
        if (!client.destroyed)
          client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      });
      client.on("close", () => upstream.destroy());
    };
    client.on("data", onData);
  });
  fs.mkdirSync(path.dirname(options.socket), { recursive: true, mode: 0o700 });
  fs.rmSync(options.socket, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.socket, () => {
      server.off("error", reject);
      resolve();
    });
  });
  fs.chmodSync(options.socket, 0o600);
  // It serves only while something else keeps the process alive (it never holds a script open).
  server.unref();
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
