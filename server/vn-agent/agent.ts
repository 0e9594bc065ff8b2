/**
 * One vn-agent: a TLS listener on 127.0.0.1 in front of one super-cluster node's kubelet. A tenant
 * apiserver (known only by its verified client certificate) asks for containerLogs / exec / attach /
 * portForward of one of its pods; the agent maps the namespace to the super cluster's, checks the
 * super pod is that tenant's and bound to this node, and pipes the request — upgrades (SPDY,
 * WebSocket) included — to the node's real kubelet. Redirects are refused, never followed.
 *
 * To the node's kubelet API it speaks HTTPS, verifies the serving certificate against
 * `kubeletTls.ca` (for "localhost", or a real node's name), and presents `kubeletTls`'s client
 * certificate when it has one. In the local world that API is ring0-simkubelet's (simulated nodes)
 * or a real node's kubelet (server/cluster/real-node); both accept only the node PKI's clients:
 * kube-apiserver and the vn-agents (server/cluster/hardening.ts).
 */

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import https from "node:https";
import type net from "node:net";
import type { TLSSocket } from "node:tls";
import { MAX_REAL_NODES, REAL_NODE_LABEL, realNodeIndex, realNodeIp } from "@/server/cluster/real-node/plan";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import type { V1Node, V1Pod } from "@/server/k8s/kinds/node";
import { PodKind } from "@/server/k8s/kinds/pod";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import { createMtlsServer } from "@/server/pki/mtls-server";
import { coalescing } from "@/server/proxy/coalesce";
import { relayedResponseHeaders } from "@/server/proxy/headers";
import { syncAnnotations, syncLabels } from "@/server/syncer/contracts";
import { tenantFromCertificate } from "./identity";
import {
  forbiddenMessage,
  type KubeletRequest,
  mayReach,
  parseKubeletRequest,
  upstreamTarget,
} from "./requests";

export interface VnAgentOptions {
  /** The super-cluster node this agent fronts. */
  node: string;
  /** The node as last seen (its kubelet endpoint may change); undefined once it is gone. */
  currentNode(): V1Node | undefined;
  superCluster: ClusterConnection;
  superNamespace(tenant: string, namespace: string): string;
  /** The agent's serving certificate and the CA its callers' client certificates must chain to. */
  tls: { cert: string; key: string; clientCa: string };
  /**
   * CA that the node's kubelet serving certificate must chain to, and the agent's credentials there:
   * a client certificate, or a bearer token (read per request: a service account's rotates).
   */
  kubeletTls: { ca: string; cert?: string; key?: string; token?: () => string };
  /** Where the node's kubelet API is (default: kubeletAddress, this machine's nodes). */
  kubeletAddress?: (node: V1Node | undefined) => KubeletAddress | { refused: string };
  logger: Logger;
  /** Port to listen on (default: any free one); fails with EADDRINUSE when it is taken. */
  port?: number;
  /** Addresses to listen on besides 127.0.0.1, on the same port (the pod API address). */
  alsoOn?: string[];
  /**
   * Requests one tenant may have open at once through this agent (logs followed, shells, port
   * forwards; default 200): one tenant's flood must not starve the others on the node.
   */
  maxStreamsPerTenant?: number;
}

export interface VnAgent {
  node: string;
  port: number;
  /** Serve new connections with this certificate (a renewed one), without a restart. */
  reloadTls(tls: VnAgentOptions["tls"]): void;
  close(): Promise<void>;
}

/** Request headers passed on to the kubelet; everything else (identity, hop-by-hop, cookies) stays here. */
const FORWARDED_REQUEST_HEADERS = [
  "accept",
  "accept-encoding",
  "content-type",
  "content-length",
  "user-agent",
  "x-stream-protocol-version",
  "sec-websocket-key",
  "sec-websocket-version",
  "sec-websocket-protocol",
  "sec-websocket-extensions",
];
/** Response headers on a 101 that the client needs to finish the handshake. */
const UPGRADE_RESPONSE_HEADERS = [
  "upgrade",
  "connection",
  "sec-websocket-accept",
  "sec-websocket-protocol",
  "sec-websocket-extensions",
  "x-stream-protocol-version",
];
const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1"]);
const CONNECT_TIMEOUT_MS = 10_000;

export function forwardedRequestHeaders(
  headers: IncomingHttpHeaders,
  upgrade: boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = headers[name];
    if (typeof value === "string") out[name] = value;
    else if (Array.isArray(value)) out[name] = value.join(", ");
  }
  if (upgrade && typeof headers.upgrade === "string") {
    out.connection = "Upgrade";
    out.upgrade = headers.upgrade;
  }
  return out;
}

/** Response headers as the vn-agent relays them (server/proxy/headers.ts). */
export function forwardedResponseHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  return relayedResponseHeaders(headers);
}

export interface KubeletAddress {
  host: string;
  port: number;
  /** The name its serving certificate is verified for (default: the address itself). */
  servername?: string;
}

/**
 * Where the node's kubelet API is, when it is on this machine: a simulated node's on 127.0.0.1
 * (ring0-simkubelet, certificate for "localhost"); a real node's on its node IP, which must be the
 * one Ring0 gave that real node (10.244.<i>.1 for ring0-real-<i>; certificate for the node's name).
 * Any other address is never dialled.
 */
export function kubeletAddress(node: V1Node | undefined): KubeletAddress | { refused: string } {
  if (!node) return { refused: "the node is gone" };
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  if (!port) return { refused: "the node reports no kubelet endpoint" };
  const addresses = node.status?.addresses ?? [];
  const preferred =
    addresses.find((address) => address.type === "Hostname") ??
    addresses.find((address) => address.type === "InternalIP");
  if (preferred && LOOPBACK_NAMES.has(preferred.address)) {
    return { host: "127.0.0.1", port, servername: "localhost" };
  }
  const name = node.metadata?.name ?? "";
  const index = realNodeIndex(name);
  const internal = addresses.find((address) => address.type === "InternalIP")?.address;
  if (
    index !== undefined &&
    index < MAX_REAL_NODES &&
    node.metadata?.labels?.[REAL_NODE_LABEL] === "true" &&
    internal === realNodeIp(index)
  ) {
    return { host: internal, port, servername: name };
  }
  return { refused: "the node's kubelet is not on this machine" };
}

/**
 * The kubelet API of the node a vn-agent pod runs on (the chart's DaemonSet): at the pod's host IP
 * (status.hostIP, the node's own address), verified for that address, on the port the node
 * reports. Never any other node's: the agent serves only the node it runs on.
 */
export function besideKubelet(
  node: V1Node | undefined,
  hostIp: string,
): KubeletAddress | { refused: string } {
  if (!node) return { refused: "the node is gone" };
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  if (!port) return { refused: "the node reports no kubelet endpoint" };
  if (!(node.status?.addresses ?? []).some((address) => address.address === hostIp))
    return { refused: "the node does not report this agent's host address" };
  return { host: hostIp, port };
}

function rawResponse(socket: net.Socket, status: number, message: string): void {
  const reason =
    {
      400: "Bad Request",
      403: "Forbidden",
      404: "Not Found",
      405: "Method Not Allowed",
      429: "Too Many Requests",
      502: "Bad Gateway",
      503: "Service Unavailable",
    }[status] ?? "Error";
  const body = Buffer.from(`${message}\n`);
  if (!socket.writable) return void socket.destroy();
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString()}`,
  );
}

export function startVnAgent(options: VnAgentOptions): Promise<VnAgent> {
  const log = options.logger.child({ component: "vn-agent", node: options.node });
  const sockets = new Set<net.Socket>();

  type Decision =
    | { ok: true; tenant: string; request: KubeletRequest; target: string; kubelet: KubeletAddress }
    | { ok: false; tenant?: string; verb?: string; status: number; message: string };

  /** Who asks, for what, and whether they may: the same checks for plain and upgrade requests. */
  const decide = async (req: IncomingMessage): Promise<Decision> => {
    const socket = req.socket as TLSSocket;
    const identity = socket.authorized
      ? tenantFromCertificate(socket.getPeerCertificate()?.subject)
      : { refused: "the client certificate is not verified" };
    if ("refused" in identity) return { ok: false, status: 403, message: identity.refused };
    const { tenant } = identity;
    const parsed = parseKubeletRequest(req.method ?? "GET", req.url ?? "/");
    if (!parsed.ok) return { ok: false, tenant, status: parsed.status, message: parsed.message };
    const { request } = parsed;
    const superNs = options.superNamespace(tenant, request.namespace);
    let pod: V1Pod | undefined;
    try {
      pod = await kubeRequest<V1Pod>(options.superCluster, {
        path: PodKind.path({ namespace: superNs, name: request.pod }),
        timeoutMs: 10_000,
      });
    } catch (error) {
      if (!isNotFound(error)) {
        log.warn("cannot read the super pod", { tenant, error });
        return {
          ok: false,
          tenant,
          verb: request.verb,
          status: 503,
          message: "the vn-agent cannot check the pod right now; try again",
        };
      }
    }
    const reach = mayReach(
      tenant,
      request,
      options.node,
      pod && {
        labels: pod.metadata?.labels ?? {},
        annotations: pod.metadata?.annotations ?? {},
        nodeName: pod.spec?.nodeName,
      },
      { tenantLabel: syncLabels.tenant, namespaceAnnotation: syncAnnotations.namespace },
    );
    if (!reach.allowed) {
      log.info("refused", { tenant, verb: request.verb, reason: reach.reason });
      return { ok: false, tenant, verb: request.verb, status: 403, message: forbiddenMessage(request) };
    }
    const address = (options.kubeletAddress ?? kubeletAddress)(options.currentNode());
    if ("refused" in address)
      return { ok: false, tenant, verb: request.verb, status: 503, message: address.refused };
    return { ok: true, tenant, request, target: upstreamTarget(request, superNs), kubelet: address };
  };

  const upstream = (decision: Extract<Decision, { ok: true }>, req: IncomingMessage, upgrade: boolean) =>
    https.request({
      host: decision.kubelet.host,
      port: decision.kubelet.port,
      ...(decision.kubelet.servername ? { servername: decision.kubelet.servername } : {}),
      ca: options.kubeletTls.ca,
      ...(options.kubeletTls.cert && options.kubeletTls.key
        ? { cert: options.kubeletTls.cert, key: options.kubeletTls.key }
        : {}),
      rejectUnauthorized: true,
      method: req.method,
      path: decision.target,
      headers: {
        ...forwardedRequestHeaders(req.headers, upgrade),
        ...(options.kubeletTls.token ? { authorization: `Bearer ${options.kubeletTls.token()}` } : {}),
      },
      agent: false,
      timeout: CONNECT_TIMEOUT_MS,
    });

  const record = (
    started: number,
    req: IncomingMessage,
    fields: { tenant?: string; verb?: string; status: number },
  ) =>
    log.info("request", {
      tenant: fields.tenant,
      verb: fields.verb,
      method: req.method,
      path: (req.url ?? "").split("?")[0]?.slice(0, 300),
      status: fields.status,
      durationMs: Math.round(performance.now() - started),
    });

  /** Open requests per tenant; a slot, or undefined when the tenant holds its share already. */
  const open = new Map<string, number>();
  const maxStreams = options.maxStreamsPerTenant ?? 200;
  const hold = (tenant: string): (() => void) | undefined => {
    const held = open.get(tenant) ?? 0;
    if (held >= maxStreams) return undefined;
    open.set(tenant, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (open.get(tenant) ?? 1) - 1;
      if (left > 0) open.set(tenant, left);
      else open.delete(tenant);
    };
  };
  const tooMany = () =>
    `this tenant has ${maxStreams} logs, shells or port forwards open on this node already; close some and try again`;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const decision = await decide(req);
    if (!decision.ok) {
      res
        .writeHead(decision.status, { "content-type": "text/plain; charset=utf-8" })
        .end(`${decision.message}\n`);
      record(started, req, decision);
      return;
    }
    const fields = { tenant: decision.tenant, verb: decision.request.verb };
    const release = hold(decision.tenant);
    if (!release) {
      res.writeHead(429, { "content-type": "text/plain; charset=utf-8" }).end(`${tooMany()}\n`);
      record(started, req, { ...fields, status: 429 });
      return;
    }
    res.on("close", release);
    const outgoing = upstream(decision, req, false);
    outgoing.on("timeout", () => outgoing.destroy(new Error("the kubelet did not answer in time")));
    outgoing.on("response", (answer) => {
      outgoing.setTimeout(0);
      const status = answer.statusCode ?? 502;
      if (status >= 300 && status < 400) {
        answer.resume();
        res.writeHead(502, { "content-type": "text/plain; charset=utf-8" });
        res.end("the kubelet answered with a redirect; the vn-agent never follows one\n");
        record(started, req, { ...fields, status: 502 });
        return;
      }
      res.writeHead(status, forwardedResponseHeaders(answer.headers));
      // A kubelet flushes logs line by line: relayed in merged chunks (server/proxy/coalesce.ts).
      answer.pipe(coalescing()).pipe(res);
      answer.on("error", () => res.destroy());
      res.on("close", () => {
        answer.destroy();
        record(started, req, { ...fields, status });
      });
    });
    outgoing.on("error", (error) => {
      if (!res.headersSent) {
        log.warn("the kubelet is unreachable", { error: error.message });
        res
          .writeHead(502, { "content-type": "text/plain; charset=utf-8" })
          .end("the node's kubelet is unreachable\n");
        record(started, req, { ...fields, status: 502 });
      } else {
        res.destroy();
      }
    });
    res.on("close", () => outgoing.destroy());
    req.pipe(outgoing);
  };

  const handleUpgrade = async (req: IncomingMessage, socket: net.Socket, head: Buffer) => {
    const started = performance.now();
    sockets.add(socket);
    socket.on("error", () => socket.destroy());
    const decision = await decide(req);
    if (!decision.ok) {
      rawResponse(socket, decision.status, decision.message);
      record(started, req, decision);
      return;
    }
    const fields = { tenant: decision.tenant, verb: decision.request.verb };
    const release = hold(decision.tenant);
    if (!release) {
      rawResponse(socket, 429, tooMany());
      record(started, req, { ...fields, status: 429 });
      return;
    }
    socket.on("close", release);
    const outgoing = upstream(decision, req, true);
    outgoing.on("timeout", () => outgoing.destroy(new Error("the kubelet did not answer in time")));
    outgoing.on("upgrade", (answer, kubelet: net.Socket, kubeletHead: Buffer) => {
      outgoing.setTimeout(0);
      sockets.add(kubelet);
      const lines = [`HTTP/1.1 101 ${answer.statusMessage || "Switching Protocols"}`];
      for (const name of UPGRADE_RESPONSE_HEADERS) {
        const value = answer.headers[name];
        if (typeof value === "string") lines.push(`${name}: ${value}`);
      }
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (kubeletHead.length > 0) socket.write(kubeletHead);
      if (head.length > 0) kubelet.write(head);
      kubelet.pipe(socket);
      socket.pipe(kubelet);
      let closed = false;
      const close = () => {
        if (closed) return;
        closed = true;
        kubelet.destroy();
        socket.destroy();
        sockets.delete(kubelet);
        sockets.delete(socket);
        record(started, req, { ...fields, status: 101 });
      };
      kubelet.on("close", close);
      kubelet.on("error", close);
      socket.on("close", close);
    });
    outgoing.on("response", (answer) => {
      outgoing.setTimeout(0);
      const status = answer.statusCode ?? 502;
      if (status >= 300 && status < 400) {
        answer.resume();
        rawResponse(socket, 502, "the kubelet answered with a redirect; the vn-agent never follows one");
        record(started, req, { ...fields, status: 502 });
        return;
      }
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => {
        if (chunks.reduce((total, part) => total + part.length, 0) < 64 * 1024) chunks.push(chunk);
      });
      answer.on("end", () => {
        rawResponse(
          socket,
          status,
          Buffer.concat(chunks).toString("utf8").trim() || `the kubelet answered ${status}`,
        );
        record(started, req, { ...fields, status });
      });
    });
    outgoing.on("error", (error) => {
      log.warn("the kubelet is unreachable", { error: error.message });
      rawResponse(socket, 502, "the node's kubelet is unreachable");
      record(started, req, { ...fields, status: 502 });
    });
    socket.on("close", () => {
      sockets.delete(socket);
      outgoing.destroy();
    });
    outgoing.end();
  };

  const mtls = createMtlsServer(options.tls, log, handle);
  mtls.server.on("upgrade", (req: IncomingMessage, socket: net.Socket, head: Buffer) => {
    handleUpgrade(req, socket, head).catch((error: unknown) => {
      log.error("upgrade failed", { error });
      socket.destroy();
    });
  });

  return mtls.listen(options.port, options.alsoOn).then((port) => {
    log.info("vn-agent listening", { port });
    return {
      node: options.node,
      port,
      reloadTls: (tls) => mtls.reload(tls),
      close: async () => {
        // Upgraded streams (and their kubelet sides) end with the agent.
        for (const socket of sockets) socket.destroy();
        sockets.clear();
        await mtls.close();
      },
    };
  });
}
