/**
 * What both proxies share once a request is admitted: the request to the tenant API server (the
 * client's headers without its identity, the Ring0 user impersonated, on the tenant's agent, timed
 * until the answer arrives) and the rewriting of redirects so they point back through the gateway.
 */
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from "node:http";
import https from "node:https";
import { impersonationOf } from "@/server/impersonation/as-user";
import { upstreamRequestHeaders } from "@/server/k8s/impersonation";
import type { Admitted, Denial } from "./admit";
import { gatewayLocation } from "./path";
import type { RequestLog, RequestRecord } from "./request-record";
import type { StreamRights } from "./stream-rights";

/** What a proxy works with: admission, the request log and the rights of what stays open. */
export interface ProxyContext {
  admit(request: IncomingMessage, record: RequestRecord): Promise<Denial | Admitted>;
  requestLog: RequestLog;
  rights: StreamRights;
  /** Until the tenant API server's response headers (or 101) arrive. */
  responseTimeoutMs: number;
}

const hostname = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

/** The request upstream for an admitted one; nothing is sent until the caller writes or ends it. */
export function openUpstream(
  request: IncomingMessage,
  admitted: Admitted,
  record: RequestRecord,
  responseTimeoutMs: number,
): ClientRequest {
  const headers = upstreamRequestHeaders(request.headers, {
    impersonate: impersonationOf(admitted.tenant, admitted.verified.user),
    host: admitted.upstream.url.host,
    clientAddress: request.socket.remoteAddress,
    upgrade: record.upgrade,
  });
  const { url, basePath, agent } = admitted.upstream;
  const upstreamRequest = https.request({
    agent,
    protocol: "https:",
    hostname: hostname(url),
    port: url.port || 443,
    method: record.method,
    path: basePath + admitted.upstreamPath,
    headers,
  });
  upstreamRequest.setTimeout(responseTimeoutMs, () =>
    upstreamRequest.destroy(new Error("the tenant API server did not answer in time")),
  );
  return upstreamRequest;
}

/** Redirects within the tenant API server point back through the gateway; others are dropped. */
export function rewriteLocation(headers: OutgoingHttpHeaders, admitted: Admitted) {
  const location = headers.location;
  if (typeof location !== "string") return;
  const { url, basePath } = admitted.upstream;
  const rewritten = gatewayLocation(location, url.origin, basePath, admitted.tenant, admitted.upstreamPath);
  if (rewritten === null) delete headers.location;
  else headers.location = rewritten;
}

/**
 * A GET of `path` in the tenant's control plane as the admitted user (the gateway's own request, not
 * the client's): its status and JSON text, at most `limitBytes`.
 */
export function upstreamGet(
  request: IncomingMessage,
  admitted: Admitted,
  path: string,
  timeoutMs: number,
  limitBytes = 64 * 1024 * 1024,
): Promise<{ status: number; text: string }> {
  const headers = upstreamRequestHeaders(
    { accept: "application/json" },
    {
      impersonate: impersonationOf(admitted.tenant, admitted.verified.user),
      host: admitted.upstream.url.host,
      clientAddress: request.socket.remoteAddress,
      upgrade: false,
    },
  );
  const { url, basePath, agent } = admitted.upstream;
  return new Promise((resolve, reject) => {
    const upstream = https.request(
      {
        agent,
        protocol: "https:",
        hostname: hostname(url),
        port: url.port || 443,
        method: "GET",
        path: basePath + path,
        headers,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > limitBytes) {
            upstream.destroy(new Error(`the answer is larger than ${limitBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 502, text: Buffer.concat(chunks).toString("utf8") }),
        );
        response.on("error", reject);
      },
    );
    upstream.setTimeout(timeoutMs, () =>
      upstream.destroy(new Error("the tenant API server did not answer in time")),
    );
    upstream.on("error", reject);
    upstream.end();
  });
}
