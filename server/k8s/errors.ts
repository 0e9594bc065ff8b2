/**
 * Typed Kubernetes API errors. Everything in server/k8s converts what the client library, fetch or
 * the API server throws into one `K8sError` carrying the API's own Status (code, reason, message),
 * so domain code and the tRPC error middleware can act on `reason` instead of parsing strings.
 */

/** Kubernetes `Status.reason` values Ring0 acts on, plus "Unreachable" for connection failures. */
export type K8sReason =
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Invalid"
  | "Forbidden"
  | "Unauthorized"
  | "BadRequest"
  | "MethodNotAllowed"
  | "Expired"
  | "Gone"
  | "Timeout"
  | "TooManyRequests"
  | "InternalError"
  | "ServiceUnavailable"
  | "Unreachable"
  | "Unknown";

/** `Status.details` as the API server sends it (Invalid lists the offending fields in `causes`). */
export interface K8sErrorDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: { reason?: string; message?: string; field?: string }[];
  retryAfterSeconds?: number;
}

export class K8sError extends Error {
  override name = "K8sError";
  /** HTTP status code; 0 when the server could not be reached at all. */
  readonly status: number;
  readonly reason: K8sReason | (string & {});
  readonly details?: K8sErrorDetails;

  constructor(
    init: { status: number; reason: string; message: string; details?: K8sErrorDetails },
    options?: ErrorOptions,
  ) {
    super(init.message, options);
    this.status = init.status;
    this.reason = init.reason;
    if (init.details) this.details = init.details;
  }
}

/** Raised by connectCluster for a kubeconfig that cannot be used; the message names the source. */
export class K8sConfigError extends Error {
  override name = "K8sConfigError";
}

const reasonByStatus: Record<number, K8sReason> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  410: "Expired",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

interface StatusBody {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
  details?: K8sErrorDetails;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** A `kind: Status` object (from a response body or a watch ERROR event), if `value` is one. */
export function statusBody(value: unknown): StatusBody | undefined {
  let parsed = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (!isRecord(parsed)) return undefined;
  if (parsed.kind !== "Status" && typeof parsed.reason !== "string" && typeof parsed.code !== "number") {
    return undefined;
  }
  return parsed as StatusBody;
}

/** A K8sError from an HTTP status and (optionally) the response body the server sent with it. */
export function errorFromResponse(status: number, body: unknown, fallbackMessage?: string): K8sError {
  const parsed = statusBody(body);
  const code = typeof parsed?.code === "number" && parsed.code > 0 ? parsed.code : status;
  const reason = parsed?.reason || reasonByStatus[code] || "Unknown";
  const rawText = typeof body === "string" ? body.trim().slice(0, 300) : "";
  const message = parsed?.message || fallbackMessage || rawText || `HTTP ${code}`;
  return new K8sError({
    status: code,
    reason,
    message,
    ...(parsed?.details ? { details: parsed.details } : {}),
  });
}

const connectionCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EPIPE",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

function connectionCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; isRecord(current) && depth < 5; depth++) {
    const code = current.code;
    if (typeof code === "string" && connectionCodes.has(code)) return code;
    current = current.cause;
  }
  return undefined;
}

/**
 * Convert anything thrown by client-node (ApiException with `code` + `body`), fetch (TypeError
 * "fetch failed" with a socket `cause`), an abort, or a raw Status body into a K8sError. `server`
 * names the API server in "Unreachable" messages.
 */
export function toK8sError(error: unknown, server?: string): K8sError {
  if (error instanceof K8sError) return error;
  const where = server ? ` ${server}` : "";
  const code = connectionCode(error);
  if (code) {
    return new K8sError(
      { status: 0, reason: "Unreachable", message: `Kubernetes API server${where} is unreachable (${code})` },
      { cause: error },
    );
  }
  if (isRecord(error)) {
    // client-node's ApiException: numeric `code`, `body` as a string or parsed object.
    if (typeof error.code === "number" && "body" in error) {
      const converted = errorFromResponse(error.code, error.body);
      return new K8sError(
        {
          status: converted.status,
          reason: converted.reason,
          message: converted.message,
          details: converted.details,
        },
        { cause: error },
      );
    }
    // client-node's Watch: an Error with `statusCode`.
    if (typeof error.statusCode === "number") {
      const converted = errorFromResponse(error.statusCode, undefined, String(error.message ?? ""));
      return new K8sError(
        { status: converted.status, reason: converted.reason, message: converted.message },
        { cause: error },
      );
    }
    const body = statusBody(error);
    if (body && !(error instanceof Error)) return errorFromResponse(body.code ?? 0, body);
    if (error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")) {
      return new K8sError(
        {
          status: 0,
          reason: "Timeout",
          message: `request to Kubernetes API server${where} timed out or was aborted`,
        },
        { cause: error },
      );
    }
    if (error instanceof TypeError && /fetch failed/i.test(error.message)) {
      return new K8sError(
        {
          status: 0,
          reason: "Unreachable",
          message: `Kubernetes API server${where} is unreachable (${error.message})`,
        },
        { cause: error },
      );
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return new K8sError({ status: 0, reason: "Unknown", message }, { cause: error });
}

export function isNotFound(error: unknown): boolean {
  return error instanceof K8sError && (error.status === 404 || error.reason === "NotFound");
}

export function isAlreadyExists(error: unknown): boolean {
  return error instanceof K8sError && error.reason === "AlreadyExists";
}

/** 409: an optimistic-concurrency Conflict or an AlreadyExists. */
export function isConflict(error: unknown): boolean {
  return error instanceof K8sError && (error.status === 409 || error.reason === "Conflict");
}

/** 410: the requested resourceVersion is too old (compacted); a watcher must relist. */
export function isGone(error: unknown): boolean {
  return (
    error instanceof K8sError &&
    (error.status === 410 || error.reason === "Expired" || error.reason === "Gone")
  );
}

export function isUnreachable(error: unknown): boolean {
  return error instanceof K8sError && error.reason === "Unreachable";
}
