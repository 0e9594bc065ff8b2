/**
 * Raw HTTP to a cluster's API server through client-node's own authentication and TLS dispatcher,
 * for paths the typed clients do not cover well (arbitrary list/watch paths, /readyz, /version).
 */
import { HttpMethod, IsomorphicFetchHttpLibrary, RequestContext } from "@kubernetes/client-node";
import type { ClusterConnection } from "./cluster";
import { errorFromResponse, toK8sError } from "./errors";

export interface KubeRequest {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Absolute API path, e.g. /api/v1/nodes. */
  path: string;
  query?: Record<string, string | undefined>;
  /** Serialised as JSON unless already a string. */
  body?: unknown;
  contentType?: string;
  /** Extra request headers (e.g. Impersonate-User for a probe), one value each. */
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const library = new IsomorphicFetchHttpLibrary();

function requestUrl(conn: ClusterConnection, request: KubeRequest): string {
  const url = new URL(conn.server.replace(/\/+$/, "") + request.path);
  for (const [key, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, value);
  }
  return url.toString();
}

async function send(conn: ClusterConnection, request: KubeRequest) {
  const context = new RequestContext(requestUrl(conn, request), HttpMethod[request.method ?? "GET"]);
  context.setHeaderParam("Accept", "application/json");
  for (const [name, value] of Object.entries(request.headers ?? {})) context.setHeaderParam(name, value);
  if (request.body !== undefined) {
    context.setHeaderParam("Content-Type", request.contentType ?? "application/json");
    context.setBody(typeof request.body === "string" ? request.body : JSON.stringify(request.body));
  }
  const signals = [
    request.signal,
    request.timeoutMs ? AbortSignal.timeout(request.timeoutMs) : undefined,
  ].filter((signal): signal is AbortSignal => signal !== undefined);
  if (signals.length > 0) context.setSignal(AbortSignal.any(signals));
  try {
    await conn.kubeConfig.applySecurityAuthentication(context);
    return await library.send(context).toPromise();
  } catch (error) {
    throw toK8sError(error, conn.server);
  }
}

/** Response status and text; never throws for HTTP error statuses (only for transport failures). */
export async function kubeRequestText(
  conn: ClusterConnection,
  request: KubeRequest,
): Promise<{ status: number; text: string }> {
  const response = await send(conn, request);
  try {
    return { status: response.httpStatusCode, text: await response.body.text() };
  } catch (error) {
    throw toK8sError(error, conn.server);
  }
}

/** The decoded JSON body of a 2xx response; any other status throws the API's Status as a K8sError. */
export async function kubeRequest<T>(conn: ClusterConnection, request: KubeRequest): Promise<T> {
  const { status, text } = await kubeRequestText(conn, request);
  if (status < 200 || status >= 300) throw errorFromResponse(status, text);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The body stream of a 200 response (watches); any other status throws the API's Status as a K8sError. */
export async function kubeStream(
  conn: ClusterConnection,
  request: KubeRequest,
): Promise<ReadableStream<Uint8Array>> {
  const response = await send(conn, request);
  if (response.httpStatusCode !== 200) {
    const text = await response.body.text().catch(() => "");
    throw errorFromResponse(response.httpStatusCode, text);
  }
  const stream = response.body.stream();
  if (!stream) throw errorFromResponse(500, undefined, `empty response body from ${request.path}`);
  return stream;
}
