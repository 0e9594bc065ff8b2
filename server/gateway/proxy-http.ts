/**
 * Plain requests through the gateway: bodies stream both ways, watches and followed logs included.
 * A chunked watch or log cannot carry a Status mid-stream: when its right ends the client sees it
 * end, reconnects, and is then told why (401, 403, 404).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream";
import { measureTenantPods } from "@/server/workloads/usage";
import type { Admitted } from "./admit";
import { clientResponseHeaders } from "./headers";
import {
  createBufferingLimiter,
  DISCOVERY_LIMIT_BYTES,
  isAugmentableDiscovery,
  jsonOnlyAccept,
  METRICS_GROUP,
  METRICS_VERSION,
  type MetricsRoute,
  metricsGroup,
  metricsResources,
  metricsRoute,
  POD_LIST_LIMIT_BYTES,
  podMetricsItems,
  sendJson,
  withMetricsGroup,
} from "./metrics-api";
import { newRecord } from "./request-record";
import { isLongRunning } from "./requests";
import { kubeStatus, sendStatus, unreachableAnswer } from "./status";
import type { StreamEnd } from "./stream-rights";
import { openUpstream, type ProxyContext, rewriteLocation, upstreamGet } from "./upstream-request";

/** The gateway's own buffering (metrics, discovery rewrites): bounded per process and tenant. */
const buffering = createBufferingLimiter({ global: 8, perTenant: 3 });

export async function proxyRequest(
  context: ProxyContext,
  request: IncomingMessage,
  response: ServerResponse,
) {
  const { requestLog, rights } = context;
  const record = newRecord(request, false);
  const done = requestLog.finisher(record);
  const admitted = await context.admit(request, record);
  if (admitted.denied) {
    requestLog.finishDenied(record, admitted);
    sendStatus(response, admitted.code, admitted.message, admitted.retryAfterSeconds);
    request.resume();
    return;
  }
  const route = metricsRoute(admitted.apiPath);
  const query = admitted.upstreamPath.split("?").slice(1).join("?");
  const augment = !route && isAugmentableDiscovery(request, admitted.apiPath, query);
  const releaseBuffering = route || augment ? buffering.acquire(admitted.tenant) : () => {};
  if (!releaseBuffering) {
    requestLog.finishDenied(record, { code: 429, message: "too many metrics or discovery requests at once" });
    sendStatus(response, 429, "Too many metrics or discovery requests at once; retry in a second.", 1);
    request.resume();
    admitted.release();
    return;
  }
  response.on("close", releaseBuffering);
  if (route) {
    request.resume();
    try {
      done(await serveMetrics(context, request, response, admitted, route));
    } catch (error) {
      done(502, { error: error instanceof Error ? error.message : String(error) });
      if (!response.headersSent)
        sendStatus(response, 502, `The metrics of tenant "${admitted.tenant}" could not be read.`);
    } finally {
      admitted.release();
    }
    return;
  }
  // The tenant's /apis discovery gets the metrics group the gateway serves: asked for as JSON,
  // uncompressed and unconditionally (the body changes), then rewritten below.
  if (augment) {
    request.headers.accept = jsonOnlyAccept(request.headers.accept);
    delete request.headers["accept-encoding"];
    delete request.headers["if-none-match"];
  }
  const upstreamRequest = openUpstream(request, admitted, record, context.responseTimeoutMs);
  let endedBecause: StreamEnd | undefined;
  const stopWatching = rights.endWhenRightEnds(record, admitted, (why) => {
    endedBecause = why;
    upstreamRequest.destroy();
    response.destroy();
  });
  response.on("close", () => {
    admitted.release();
    stopWatching();
    if (!response.writableFinished) {
      upstreamRequest.destroy();
      // A watch the client stops is a normal end: log the status it was served with.
      done(response.headersSent ? response.statusCode : 499, {
        error: endedBecause ? `ended by the gateway: ${endedBecause}` : "client closed the connection",
      });
    }
  });
  upstreamRequest.on("response", (upstreamResponse) => {
    const status = upstreamResponse.statusCode ?? 502;
    const auditId = upstreamResponse.headers["audit-id"];
    if (
      isLongRunning(record.method, admitted.apiPath, new URLSearchParams(admitted.upstreamPath.split("?")[1]))
    ) {
      upstreamRequest.setTimeout(0);
    }
    const responseHeaders = clientResponseHeaders(upstreamResponse.headers);
    rewriteLocation(responseHeaders, admitted);
    if (augment && status === 200) {
      sendAugmentedDiscovery(upstreamResponse, response, responseHeaders, (error) =>
        done(status, error ? { error } : {}),
      );
      return;
    }
    response.writeHead(status, upstreamResponse.statusMessage, responseHeaders);
    response.flushHeaders();
    pipeline(upstreamResponse, response, (error) => {
      done(status, {
        auditId: typeof auditId === "string" ? auditId : undefined,
        ...(error && !response.writableFinished ? { error: error.message } : {}),
      });
    });
  });
  upstreamRequest.on("error", (error) => {
    if (!response.headersSent) {
      const answer = unreachableAnswer(admitted.tenant, error, record.method);
      sendStatus(response, answer.code, answer.message, answer.retryAfterSeconds);
      done(answer.code, { error: error.message });
    } else {
      response.destroy();
      done(response.statusCode, { error: error.message });
    }
  });
  pipeline(request, upstreamRequest, (error) => {
    if (error) upstreamRequest.destroy(error);
  });
}

/** Upstream's `/apis` discovery with the metrics group added (at most 16 MiB; else as it was). */
function sendAugmentedDiscovery(
  upstreamResponse: IncomingMessage,
  response: ServerResponse,
  headers: ReturnType<typeof clientResponseHeaders>,
  finished: (error?: string) => void,
) {
  const chunks: Buffer[] = [];
  let size = 0;
  upstreamResponse.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > DISCOVERY_LIMIT_BYTES) {
      upstreamResponse.destroy();
      sendStatus(response, 502, `The tenant's API discovery is larger than ${DISCOVERY_LIMIT_BYTES} bytes.`);
      finished("discovery too large");
      return;
    }
    chunks.push(chunk);
  });
  upstreamResponse.on("error", (error) => {
    response.destroy();
    finished(error.message);
  });
  upstreamResponse.on("end", () => {
    let body = Buffer.concat(chunks);
    try {
      body = Buffer.from(JSON.stringify(withMetricsGroup(JSON.parse(body.toString("utf8")))));
    } catch {
      // not JSON after all: as it was
    }
    delete headers.etag;
    delete headers["content-encoding"];
    headers["content-length"] = String(body.length);
    response.writeHead(200, headers);
    response.end(body);
    finished();
  });
}

const statusOf = (code: number, message: string) => kubeStatus(code, message);

/** Answers a metrics.k8s.io request for the tenant; resolves with the status sent. */
async function serveMetrics(
  context: ProxyContext,
  request: IncomingMessage,
  response: ServerResponse,
  admitted: Admitted,
  route: MetricsRoute,
): Promise<number> {
  const send = (status: number, body: unknown) => {
    sendJson(response, status, body);
    return status;
  };
  if (request.method !== "GET")
    return send(405, {
      ...statusOf(405, `${request.method} is not supported on ${METRICS_GROUP}`),
      reason: "MethodNotAllowed",
    });
  const query = new URLSearchParams(admitted.upstreamPath.split("?").slice(1).join("?"));
  if (query.get("watch") === "true" || query.get("watch") === "1")
    return send(405, {
      ...statusOf(405, `watch is not supported on ${METRICS_GROUP}`),
      reason: "MethodNotAllowed",
    });
  if (route.kind === "group") return send(200, metricsGroup);
  if (route.kind === "resources") return send(200, metricsResources);
  // Discovery is everyone's who got this far (a grantee's kubectl reads it too); metrics are not.
  if (admitted.verified.token.tenant !== admitted.tenant)
    return send(
      403,
      statusOf(403, `${METRICS_GROUP} is served to tenant "${admitted.tenant}"'s own users only`),
    );
  if (route.kind === "nodes")
    return send(
      404,
      statusOf(
        404,
        `${METRICS_GROUP}: only pods are served to tenants (a node is shared; its usage would tell about other tenants). Use kubectl top pods.`,
      ),
    );
  // The pods, listed as the caller: its RBAC in the tenant decides which may be measured.
  const podsPath = route.name
    ? `/api/v1/namespaces/${route.namespace}/pods/${route.name}`
    : route.namespace
      ? `/api/v1/namespaces/${route.namespace}/pods`
      : "/api/v1/pods";
  const selectors = new URLSearchParams();
  for (const key of ["labelSelector", "fieldSelector"]) {
    const value = query.get(key);
    if (value) selectors.set(key, value);
  }
  const listed = await upstreamGet(
    request,
    admitted,
    selectors.size > 0 ? `${podsPath}?${selectors}` : podsPath,
    context.responseTimeoutMs,
    POD_LIST_LIMIT_BYTES,
  ).catch((error: unknown) => {
    if (error instanceof Error && error.message.includes("larger than"))
      return {
        status: 413,
        text: JSON.stringify(statusOf(413, "Too many pods to measure at once: narrow it with -n or -l.")),
      };
    throw error;
  });
  if (listed.status !== 200) {
    response.writeHead(listed.status, { "content-type": "application/json" });
    response.end(listed.text);
    return listed.status;
  }
  const parsed = JSON.parse(listed.text) as { items?: unknown[] } & Record<string, unknown>;
  const pods = (route.name ? [parsed] : (parsed.items ?? [])) as Parameters<typeof podMetricsItems>[0];
  const samples = await measureTenantPods(
    admitted.tenant,
    pods.flatMap((pod) =>
      pod.metadata?.name && pod.metadata.namespace
        ? [{ namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid ?? null }]
        : [],
    ),
  );
  const items = podMetricsItems(pods, samples, new Date());
  const apiVersion = `${METRICS_GROUP}/${METRICS_VERSION}`;
  if (route.name) {
    const item = items[0];
    if (!item) return send(404, statusOf(404, `podmetrics.${METRICS_GROUP} "${route.name}" not found`));
    return send(200, { kind: "PodMetrics", apiVersion, ...item });
  }
  return send(200, { kind: "PodMetricsList", apiVersion, metadata: {}, items });
}
