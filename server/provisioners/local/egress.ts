/**
 * The egress wall of local tenant control planes (issue 23): a tenant's kube-apiserver sends every
 * connection it makes on the tenant's behalf through HTTP CONNECT proxies on Unix sockets of its
 * own (`--egress-selector-config-file`), which Ring0 runs: one for the `controlplane` egress (webhooks
 * configured by URL) and one for the `cluster` egress (the kubelet client, pods/proxy, services/proxy,
 * webhooks and aggregated APIs configured by Service). The proxy knows the tenant by the socket,
 * never resolves a name, and asks the policy (./egress-policy.ts) about each target. Everything the
 * policy refuses — Ring0's host ports, other tenants, the super cluster, link-local and metadata
 * addresses, a closed port — gets the same answer, 403, without a connection being made: the
 * tenant learns nothing about what is behind an address. Each refusal is reported (`onRefused`:
 * Ring0 audits it).
 */
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import type { Logger } from "@/server/logger";
import {
  createEgressPolicy,
  type EgressDecision,
  type EgressPolicy,
  type EgressSelection,
  type EgressTarget,
} from "./egress-policy";

/**
 * Where a tenant's apiserver finds its egress proxies (`<stateDir>/egress/<tenant>.sock` and
 * `<tenant>.cluster.sock`, outside the tenant's dir, which a re-create removes), and the file in its
 * dir that tells it so.
 */
export function egressPaths(dir: string): { sockets: Record<EgressSelection, string>; config: string } {
  const tenantsDir = path.dirname(dir);
  const egressDir = path.join(path.dirname(tenantsDir), "egress");
  const tenant = path.basename(dir);
  const sockets = {
    controlplane: path.join(egressDir, `${tenant}.sock`),
    cluster: path.join(egressDir, `${tenant}.cluster.sock`),
  };
  return { sockets, config: path.join(dir, "egress-selector.yaml") };
}

/** kube-apiserver's EgressSelectorConfiguration: both egresses through their proxies. */
export function egressSelectorConfig(sockets: Record<EgressSelection, string>): string {
  const lines = [
    "apiVersion: apiserver.k8s.io/v1beta1",
    "kind: EgressSelectorConfiguration",
    "egressSelections:",
  ];
  for (const selection of ["controlplane", "cluster"] as const) {
    lines.push(
      `  - name: ${selection}`,
      "    connection:",
      "      proxyProtocol: HTTPConnect",
      "      transport:",
      "        uds:",
      `          udsName: ${JSON.stringify(sockets[selection])}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The target of a CONNECT request line ("CONNECT 10.0.0.1:443 HTTP/1.1"), or undefined. The host
 * is normalised once (IPv4 forms such as `0x7f.1` become dotted quads, names lowercase) and that
 * normal form is what the policy checks and what is dialled.
 */
export function connectTarget(requestLine: string): EgressTarget | undefined {
  const match = /^CONNECT (\[[0-9A-Fa-f:.]+\]|[^\s:[\]/@?#]+):(\d{1,5}) HTTP\/1\.[01]$/.exec(requestLine);
  if (!match?.[1] || !match[2]) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  let url: URL;
  try {
    // Any port but the scheme's default keeps the host as given; the port is the one matched above.
    url = new URL(`http://${match[1]}:1`);
  } catch {
    return undefined;
  }
  return { host: url.hostname.replace(/^\[(.*)\]$/, "$1"), port };
}

/** A refused connection, as the operator's audit sees it. */
export interface EgressRefusal {
  tenant: string;
  selection: EgressSelection;
  target: EgressTarget;
  why: string;
}

const REFUSED = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const BAD_REQUEST = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const BAD_GATEWAY = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const MAX_HEADER_BYTES = 8 * 1024;
/** sun_path is 108 bytes on Linux, one of them the terminating NUL. */
const MAX_SOCKET_PATH = 107;

export interface EgressProxy {
  close(): Promise<void>;
}

export interface EgressProxyOptions {
  tenant: string;
  /** The socket of each egress (egressPaths(dir).sockets); a stale socket file is replaced. */
  sockets: Record<EgressSelection, string>;
  logger: Logger;
  /** Default: Ring0's policy with the process-wide super cluster and no operator allowances. */
  policy?: EgressPolicy;
  /** Connections open at once (tunnels and those being decided); beyond, refused. Default 512. */
  maxConnections?: number;
  /**
   * Tunnels to Ring0's own webhook server open at once (default RING0_WEBHOOK_TUNNELS): it serves every tenant, and a
   * tenant's webhooks may name it too, so one tenant's fan-out is bounded here.
   */
  maxRing0WebhookConnections?: number;
  onRefused?: (refusal: EgressRefusal) => void;
}

/**
 * Tunnels one tenant's control plane may hold to Ring0's webhook server at once. Each webhook call
 * in flight takes one (an API server opens a connection per concurrent call), so this is above
 * the bursts a tenant makes in earnest: 50 pods created at once, each admitted by the quota
 * webhook, met a limit of 32 and failed.
 */
export const RING0_WEBHOOK_TUNNELS = 128;

/** Serves one tenant's egress on its sockets, until closed. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const policy = options.policy ?? createEgressPolicy();
  // Both ends of every tunnel count: a tenant's control plane holds at most half this many.
  const maxConnections = 2 * (options.maxConnections ?? 512);
  const maxRing0Webhook = options.maxRing0WebhookConnections ?? RING0_WEBHOOK_TUNNELS;
  let ring0WebhookTunnels = 0;
  const log = options.logger.child({ component: "egress", tenant: options.tenant });
  const sockets = new Set<net.Socket>();

  const tunnel = (client: net.Socket, dial: EgressTarget, rest: Buffer) => {
    const upstream = net.connect(dial.port, dial.host);
    let connected = false;
    sockets.add(upstream);
    upstream.once("connect", () => {
      connected = true;
      client.setTimeout(0);
      client.write("HTTP/1.1 200 Connection established\r\n\r\n");
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.on("error", () => {
      // Only allowed destinations get here: the tenant's own pods, Ring0's webhook, a vn-agent.
      // Once the tunnel is up its bytes are the tenant's (TLS, mostly): no answer of ours in them.
      if (!client.destroyed && !connected) client.end(BAD_GATEWAY);
    });
    upstream.on("close", () => {
      sockets.delete(upstream);
      // The tunnel is over once its upstream is. Unpiped from it, the client would be left paused,
      // never reading its own end, and held open (and counted) for good: close it as soon as what
      // the upstream sent is flushed, or shortly if the tenant's side does not read it.
      if (client.destroyed) return;
      if (!client.writableEnded) client.end();
      if (client.writableFinished) {
        client.destroy();
        return;
      }
      client.once("finish", () => client.destroy());
      setTimeout(() => client.destroy(), 10_000).unref();
    });
    client.on("close", () => upstream.destroy());
  };

  const serve = (selection: EgressSelection) => (client: net.Socket) => {
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
      const decided: Promise<EgressDecision> =
        sockets.size > maxConnections
          ? Promise.resolve({ allowed: false, why: `more than ${maxConnections} connections open at once` })
          : policy(options.tenant, selection, target);
      decided
        .catch(
          (error: unknown): EgressDecision => ({
            allowed: false,
            why: "the policy failed",
            error: String(error),
          }),
        )
        .then((decision) => {
          if (client.destroyed) return;
          if (
            decision.allowed &&
            decision.rule === "ring0-webhook" &&
            ring0WebhookTunnels >= maxRing0Webhook
          ) {
            decision = {
              allowed: false,
              why: `more than ${maxRing0Webhook} connections to Ring0's webhook server at once`,
            };
          }
          if (!decision.allowed) {
            // One answer for every refused address, and no connection made: nothing is learnt.
            log.warn("egress refused", {
              selection,
              target: `${target.host}:${target.port}`,
              why: decision.why,
              ...(decision.error ? { error: decision.error } : {}),
            });
            options.onRefused?.({ tenant: options.tenant, selection, target, why: decision.why });
            client.end(REFUSED);
            return;
          }
          if (decision.rule === "ring0-webhook") {
            ring0WebhookTunnels += 1;
            client.once("close", () => {
              ring0WebhookTunnels -= 1;
            });
          }
          tunnel(client, decision.dial, rest);
        });
    };
    client.on("data", onData);
  };

  const servers: net.Server[] = [];
  for (const selection of ["controlplane", "cluster"] as const) {
    const socket = options.sockets[selection];
    if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
      throw new Error(
        `the egress socket ${socket} is longer than a Unix socket path may be (${MAX_SOCKET_PATH} bytes): use a shorter state dir (RING0_STATE_DIR)`,
      );
    }
    const server = net.createServer(serve(selection));
    fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 });
    fs.rmSync(socket, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socket, () => {
        server.off("error", reject);
        resolve();
      });
    });
    fs.chmodSync(socket, 0o600);
    // It serves only while something else keeps the process alive (it never holds a script open).
    server.unref();
    servers.push(server);
  }
  return {
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(
        servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
      );
    },
  };
}
