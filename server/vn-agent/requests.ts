/**
 * The kubelet API requests a vn-agent accepts, and how each maps onto the super cluster (pure;
 * unit-tested). Only the paths a kube-apiserver sends for `kubectl logs`, `exec`, `attach` and
 * `port-forward` pass; only their own query parameters are forwarded, rebuilt rather than copied.
 */

export type KubeletVerb = "containerLogs" | "exec" | "attach" | "portForward";

export interface KubeletRequest {
  verb: KubeletVerb;
  /** The namespace as the tenant names it. */
  namespace: string;
  pod: string;
  /** Absent for portForward only. */
  container?: string;
  /** The accepted query parameters, in order (`command` may repeat). */
  query: [string, string][];
}

export type ParsedRequest =
  | { ok: true; request: KubeletRequest }
  | { ok: false; status: 400 | 404 | 405; message: string };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const LOG_PARAMETERS = new Set([
  "follow",
  "tailLines",
  "timestamps",
  "sinceSeconds",
  "sinceTime",
  "previous",
  "limitBytes",
  "stream",
]);
const STREAM_PARAMETERS = new Set([
  "command",
  "input",
  "output",
  "error",
  "tty",
  "stdin",
  "stdout",
  "stderr",
]);
const PORT_FORWARD_PARAMETERS = new Set(["port"]);

const VERBS: Record<
  KubeletVerb,
  { segments: 3 | 2; methods: readonly string[]; parameters: ReadonlySet<string> }
> = {
  containerLogs: { segments: 3, methods: ["GET", "HEAD"], parameters: LOG_PARAMETERS },
  exec: { segments: 3, methods: ["GET", "POST"], parameters: STREAM_PARAMETERS },
  attach: { segments: 3, methods: ["GET", "POST"], parameters: STREAM_PARAMETERS },
  portForward: { segments: 2, methods: ["GET", "POST"], parameters: PORT_FORWARD_PARAMETERS },
};

const isVerb = (value: string): value is KubeletVerb => Object.hasOwn(VERBS, value);

/**
 * Parse a request target (path and query, as received). Refuses: other paths (404), other methods
 * (405), malformed names, dot segments and encoded slashes (400).
 */
export function parseKubeletRequest(method: string, target: string): ParsedRequest {
  const questionMark = target.indexOf("?");
  const rawPath = questionMark === -1 ? target : target.slice(0, questionMark);
  const rawQuery = questionMark === -1 ? "" : target.slice(questionMark + 1);
  const segments = rawPath.split("/");
  if (segments[0] !== "" || !isVerb(segments[1] ?? "")) {
    return {
      ok: false,
      status: 404,
      message: `the vn-agent serves only /containerLogs, /exec, /attach and /portForward for a tenant's pods; not ${rawPath.slice(0, 200)}`,
    };
  }
  const verb = segments[1] as KubeletVerb;
  const shape = VERBS[verb];
  const names = segments.slice(2);
  if (names.length !== shape.segments) {
    return {
      ok: false,
      status: 404,
      message:
        shape.segments === 3
          ? `expected /${verb}/{namespace}/{pod}/{container}`
          : `expected /${verb}/{namespace}/{pod}`,
    };
  }
  if (!shape.methods.includes(method)) {
    return { ok: false, status: 405, message: `${method} is not allowed on /${verb}` };
  }
  // Names are plain DNS names: anything percent-encoded ("%2F", "%2e%2e") is refused, not decoded.
  const [namespace = "", pod = "", container] = names;
  if (!DNS_LABEL.test(namespace) || namespace.length > 63) {
    return { ok: false, status: 400, message: "the namespace is not a valid name" };
  }
  if (!DNS_SUBDOMAIN.test(pod) || pod.length > 253) {
    return { ok: false, status: 400, message: "the pod name is not a valid name" };
  }
  if (container !== undefined && (!DNS_LABEL.test(container) || container.length > 63)) {
    return { ok: false, status: 400, message: "the container name is not a valid name" };
  }
  const query: [string, string][] = [];
  for (const [key, value] of new URLSearchParams(rawQuery)) {
    if (shape.parameters.has(key)) query.push([key, value]);
  }
  return { ok: true, request: { verb, namespace, pod, ...(container ? { container } : {}), query } };
}

/** The request target on the real kubelet: the same verb and names, in the super cluster's namespace. */
export function upstreamTarget(request: KubeletRequest, superNamespace: string): string {
  const names = [superNamespace, request.pod, ...(request.container ? [request.container] : [])];
  const query = new URLSearchParams(request.query).toString();
  return `/${request.verb}/${names.map(encodeURIComponent).join("/")}${query ? `?${query}` : ""}`;
}

/** What the vn-agent knows of a super-cluster pod when deciding whether a tenant may reach it. */
export interface SuperPodFacts {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  nodeName: string | undefined;
}

/**
 * Whether `tenant` may reach the super pod through the agent of `node`. Every refusal reads the same
 * to the caller (a missing pod, another tenant's pod, a pod elsewhere), so it is no existence oracle;
 * the reason is for the agent's own log.
 */
export function mayReach(
  tenant: string,
  request: KubeletRequest,
  node: string,
  pod: SuperPodFacts | undefined,
  keys: { tenantLabel: string; namespaceAnnotation: string },
): { allowed: true } | { allowed: false; reason: string } {
  if (!pod) return { allowed: false, reason: "no such pod in the super cluster" };
  if (pod.labels[keys.tenantLabel] !== tenant)
    return { allowed: false, reason: "the pod is not this tenant's" };
  const original = pod.annotations[keys.namespaceAnnotation];
  if (original !== undefined && original !== request.namespace) {
    return { allowed: false, reason: "the pod was synced from another namespace" };
  }
  if (pod.nodeName !== node) return { allowed: false, reason: "the pod is not bound to this agent's node" };
  return { allowed: true };
}

/** The one answer a tenant gets for any pod it may not reach. */
export function forbiddenMessage(request: KubeletRequest): string {
  return `no pod ${request.namespace}/${request.pod} of this tenant runs on this node`;
}
