/**
 * Error answers of the gateway itself, as Kubernetes `Status` objects so kubectl and client
 * libraries show the message as they would the API server's own.
 */
import type { ServerResponse } from "node:http";

const reasons: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  413: "RequestEntityTooLarge",
  421: "MisdirectedRequest",
  429: "TooManyRequests",
  502: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

export interface KubeStatus {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure";
  message: string;
  reason: string;
  code: number;
  details?: { retryAfterSeconds?: number };
}

export function kubeStatus(code: number, message: string, retryAfterSeconds?: number): KubeStatus {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: reasons[code] ?? "InternalError",
    code,
    ...(retryAfterSeconds !== undefined ? { details: { retryAfterSeconds } } : {}),
  };
}

export function statusHead(code: number, body: string, retryAfterSeconds?: number): Record<string, string> {
  return {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "cache-control": "no-store",
    ...(retryAfterSeconds !== undefined ? { "retry-after": String(retryAfterSeconds) } : {}),
    ...(code === 401 ? { "www-authenticate": 'Bearer realm="ring0"' } : {}),
  };
}

export function sendStatus(
  response: ServerResponse,
  code: number,
  message: string,
  retryAfterSeconds?: number,
): void {
  const body = JSON.stringify(kubeStatus(code, message, retryAfterSeconds));
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.writeHead(code, statusHead(code, body, retryAfterSeconds)).end(body);
}

/** The same answer written on a raw socket (upgrade requests have no ServerResponse). */
export function statusOnSocket(code: number, message: string, retryAfterSeconds?: number): string {
  const body = JSON.stringify(kubeStatus(code, message, retryAfterSeconds));
  const head = { ...statusHead(code, body, retryAfterSeconds), connection: "close" };
  const lines = Object.entries(head).map(([name, value]) => `${name}: ${value}`);
  return `HTTP/1.1 ${code} ${reasons[code] ?? "Error"}\r\n${lines.join("\r\n")}\r\n\r\n${body}`;
}

/** Errors of a connection to a control plane that is down or restarting. */
const unreachableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** Methods whose repetition changes nothing: safe for a client to retry whatever happened. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The answer for a request whose control plane could not be reached, never naming internal
 * addresses (grantees read it too):
 *   - 503 with Retry-After when a retry is safe: the connection was refused (the request never
 *     reached the API server) or the request only reads. Ring0's watchdog restarts a control
 *     plane whose component stopped within seconds; kubectl retries by itself.
 *   - 503 without Retry-After for a write the API server may have applied before the connection
 *     dropped: client-go would otherwise repeat it (a create answered AlreadyExists, a
 *     generateName object made twice), so the caller is told to check first.
 *   - 502 for anything else (TLS, protocol): retrying does not fix it.
 */
export function unreachableAnswer(
  tenant: string,
  error: Error,
  method = "GET",
): { code: number; message: string; retryAfterSeconds?: number } {
  const code = (error as NodeJS.ErrnoException).code;
  if (code && unreachableCodes.has(code)) {
    if (code === "ECONNREFUSED" || SAFE_METHODS.has(method.toUpperCase())) {
      return {
        code: 503,
        message: `The control plane of tenant "${tenant}" is not answering right now (${code}); Ring0 restarts a stopped control plane within seconds: retry shortly.`,
        retryAfterSeconds: 2,
      };
    }
    return {
      code: 503,
      message: `The control plane of tenant "${tenant}" stopped answering during this ${method.toUpperCase()} (${code}); it may or may not have been applied: check before you retry.`,
    };
  }
  return {
    code: 502,
    message: `The control plane of tenant "${tenant}" could not be reached${code ? ` (${code})` : ""}.`,
  };
}
