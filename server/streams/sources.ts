/**
 * Where log streams read from. Tenant pods: the tenant's control plane as the user (its RBAC and
 * its apiserver → vn-agent → kubelet path decide). Super-cluster pods: the super cluster with
 * Ring0's own credentials (operators only; the endpoint checks that before it gets here). Node
 * logs (the node's vn-agent, kwok): providers the runtime registers per kind.
 */

import type { IncomingMessage } from "node:http";
import type https from "node:https";
import type { Readable } from "node:stream";
import WebSocket from "ws";
import { processSlot } from "@/server/core/process-slots";
import type { SessionUser } from "@/server/core/roles";
import { stillStartingMessage } from "@/server/core/start-state";
import type { LogQuery } from "@/server/core/stream-protocol";
import { controlPlaneClient } from "@/server/impersonation/as-user";
import { type ClusterConnection, getSuperCluster } from "@/server/k8s/cluster";
import { PodKind } from "@/server/k8s/kinds/pod";
import { type StreamUpstream, streamingGet } from "@/server/k8s/stream-upstream";

/** An error a stream reports to the browser: the HTTP-like status and a message to act on. */
export class StreamError extends Error {
  override name = "StreamError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The status and message of anything a source throws (K8sError, UnavailableError, …). */
export function streamFailure(error: unknown): { status: number; message: string } {
  if (error instanceof StreamError) return { status: error.status, message: error.message };
  const shaped = error as { name?: string; status?: unknown; message?: unknown; kind?: unknown };
  const message =
    typeof shaped?.message === "string" && shaped.message ? shaped.message : "The stream failed.";
  if (shaped?.kind === "unavailable") return { status: 503, message };
  if (typeof shaped?.status === "number" && shaped.status >= 400) return { status: shaped.status, message };
  if (shaped?.name === "AbortError") return { status: 499, message: "closed" };
  return { status: 502, message };
}

/** Streaming access to the super cluster with the kubeconfig's own credentials. */
export async function superStreaming(conn: ClusterConnection): Promise<StreamUpstream> {
  const base = new URL(conn.server);
  const tls: https.RequestOptions = {};
  await conn.kubeConfig.applyToHTTPSOptions(tls);
  const basePath = base.pathname.replace(/\/+$/, "");
  const headers = { ...(tls.headers as Record<string, string> | undefined) };
  return {
    label: "the super cluster",
    get: (path, signal) =>
      streamingGet(
        {
          ...tls,
          hostname: base.hostname.replace(/^\[(.*)\]$/, "$1"),
          port: base.port || 443,
          path: basePath + path,
          headers: { ...headers, accept: "*/*" },
        },
        signal,
        conn.server,
      ),
    webSocket: (path, protocols) =>
      new WebSocket(`wss://${base.host}${basePath}${path}`, protocols, {
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        headers,
        followRedirects: false,
        perMessageDeflate: false,
      } as WebSocket.ClientOptions),
  };
}

export function requireSuperCluster(): ClusterConnection {
  const starting = stillStartingMessage("super-cluster");
  if (starting) throw new StreamError(503, starting);
  const conn = getSuperCluster();
  if (!conn)
    throw new StreamError(503, "Ring0 has no super cluster connection right now; try again shortly.");
  return conn;
}

/** The upstream a pod stream goes through for this user. */
export async function podUpstream(
  query: { source: string; tenant?: string },
  user: Pick<SessionUser, "subject" | "role" | "tenant">,
): Promise<StreamUpstream> {
  if (query.source === "tenant-pod") return controlPlaneClient().streaming(query.tenant ?? "", user);
  return superStreaming(requireSuperCluster());
}

/** The pod log API path for a query (timestamps always on: the viewer and resumption need them). */
export function podLogPath(query: LogQuery): string {
  const params = new URLSearchParams({ timestamps: "true", follow: String(query.follow) });
  if (query.container) params.set("container", query.container);
  if (query.previous) params.set("previous", "true");
  if (query.tailLines !== undefined) params.set("tailLines", String(query.tailLines));
  if (query.sinceTime) params.set("sinceTime", query.sinceTime);
  const path = PodKind.path({ namespace: query.namespace ?? "", name: query.pod ?? "", subresource: "log" });
  return `${path}?${params.toString()}`;
}

/** Node logs of one kind ("vn-agent", "kwok"): lines "<RFC 3339> <text>\n" as a stream. */
export type NodeLogProvider = (
  node: string,
  options: { tailLines?: number; sinceTime?: string; follow: boolean },
  signal: AbortSignal,
) => Promise<Readable>;

const slot = processSlot<Map<string, NodeLogProvider>>("nodeLogProviders");

function providers(): Map<string, NodeLogProvider> {
  return slot.ensure(() => new Map());
}

export function registerNodeLogProvider(
  kind: "vn-agent" | "kwok" | "kubelet" | "containerd",
  provider: NodeLogProvider | null,
): void {
  if (provider) providers().set(kind, provider);
  else providers().delete(kind);
}

/** The byte stream of log lines for a query. */
export async function openLogSource(
  query: LogQuery,
  user: Pick<SessionUser, "subject" | "role" | "tenant">,
  signal: AbortSignal,
): Promise<Readable | IncomingMessage> {
  if (query.source === "tenant-pod" || query.source === "super-pod") {
    const upstream = await podUpstream(query, user);
    return upstream.get(podLogPath(query), signal);
  }
  const provider = providers().get(query.source);
  if (!provider) {
    throw new StreamError(
      404,
      query.source === "kwok" || query.source === "kubelet" || query.source === "containerd"
        ? `The ${query.source} log is only available for Ring0's local super cluster.`
        : "No vn-agent runs in this Ring0 process.",
    );
  }
  return provider(
    query.node ?? "",
    { tailLines: query.tailLines, sinceTime: query.sinceTime, follow: query.follow },
    signal,
  );
}
