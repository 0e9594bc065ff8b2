/**
 * The resource metrics API (metrics.k8s.io/v1beta1) for tenants, served by the gateway itself, so
 * `kubectl top pods` works against a tenant as against any cluster with metrics-server. A tenant's
 * control plane has no metrics-server (its pods run on the super cluster's nodes), so the gateway:
 *   - adds the group to the tenant's `/apis` discovery (legacy and aggregated JSON);
 *   - answers `/apis/metrics.k8s.io[/v1beta1]` discovery itself;
 *   - answers pod metrics by listing the pods *as the caller* in the tenant's control plane first
 *     (its RBAC decides: a refusal is the tenant API server's own 403), then reading what the
 *     kubelets report for those pods' copies below (server/workloads/usage.ts). Nothing of other
 *     tenants' pods is ever read out.
 * Node metrics are not served: a node is shared, and its usage would tell one tenant about others.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { PodUsageSample } from "@/server/nodes/usage";

export const METRICS_GROUP = "metrics.k8s.io";
export const METRICS_VERSION = "v1beta1";
const groupVersion = `${METRICS_GROUP}/${METRICS_VERSION}`;

export type MetricsRoute =
  | { kind: "group" }
  | { kind: "resources" }
  | { kind: "pods"; namespace?: string; name?: string }
  | { kind: "nodes" };

const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const subdomain = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The metrics API route of an API path (no query), or undefined for any other path. */
export function metricsRoute(apiPath: string): MetricsRoute | undefined {
  const parts = apiPath.split("/").filter(Boolean);
  if (parts[0] !== "apis" || parts[1] !== METRICS_GROUP) return undefined;
  if (parts.length === 2) return { kind: "group" };
  if (parts[2] !== METRICS_VERSION) return { kind: "nodes" }; // unknown versions: not found below
  const rest = parts.slice(3);
  if (rest.length === 0) return { kind: "resources" };
  if (rest[0] === "nodes") return { kind: "nodes" };
  if (rest[0] === "pods" && rest.length === 1) return { kind: "pods" };
  if (rest[0] === "namespaces" && rest[2] === "pods" && rest[1] && label.test(rest[1])) {
    if (rest.length === 3) return { kind: "pods", namespace: rest[1] };
    if (rest.length === 4 && rest[3] && subdomain.test(rest[3]))
      return { kind: "pods", namespace: rest[1], name: rest[3] };
  }
  return { kind: "nodes" };
}

const podResource = {
  name: "pods",
  singularName: "",
  namespaced: true,
  kind: "PodMetrics",
  verbs: ["get", "list"],
};

export const metricsGroup = {
  kind: "APIGroup",
  apiVersion: "v1",
  name: METRICS_GROUP,
  versions: [{ groupVersion, version: METRICS_VERSION }],
  preferredVersion: { groupVersion, version: METRICS_VERSION },
};

export const metricsResources = {
  kind: "APIResourceList",
  apiVersion: "v1",
  groupVersion,
  resources: [podResource],
};

const aggregatedGroup = {
  metadata: { name: METRICS_GROUP, creationTimestamp: null },
  versions: [
    {
      version: METRICS_VERSION,
      resources: [
        {
          resource: "pods",
          responseKind: { group: METRICS_GROUP, version: METRICS_VERSION, kind: "PodMetrics" },
          scope: "Namespaced",
          singularResource: "",
          verbs: ["get", "list"],
        },
      ],
      freshness: "Current",
    },
  ],
};

/**
 * The tenant's `/apis` discovery with the metrics group added (pure): an APIGroupList (legacy) or
 * an APIGroupDiscoveryList (aggregated, v2 or v2beta1). Anything else, or a list that already has
 * the group, comes back unchanged.
 */
export function withMetricsGroup(body: unknown): unknown {
  const list = body as {
    kind?: string;
    groups?: { name?: string }[];
    items?: { metadata?: { name?: string } }[];
  };
  if (list?.kind === "APIGroupList" && Array.isArray(list.groups)) {
    if (list.groups.some((group) => group.name === METRICS_GROUP)) return body;
    const { kind: _kind, apiVersion: _apiVersion, ...group } = metricsGroup;
    return { ...list, groups: [...list.groups, group] };
  }
  if (list?.kind === "APIGroupDiscoveryList" && Array.isArray(list.items)) {
    if (list.items.some((item) => item.metadata?.name === METRICS_GROUP)) return body;
    return { ...list, items: [...list.items, aggregatedGroup] };
  }
  return body;
}

/** A Kubernetes quantity of CPU in nanocores and of memory in KiB, as metrics-server writes them. */
function quantities(usage: { cpuCores: number; memoryBytes: number }) {
  return { cpu: `${Math.round(usage.cpuCores * 1e9)}n`, memory: `${Math.round(usage.memoryBytes / 1024)}Ki` };
}

interface ListedPod {
  metadata?: { name?: string; namespace?: string; uid?: string; labels?: Record<string, string> };
}

/** PodMetrics for the listed pods that have a sample with container metrics (pure). */
export function podMetricsItems(pods: ListedPod[], samples: Map<string, PodUsageSample>, now: Date) {
  const items = [];
  for (const pod of pods) {
    const { name, namespace, labels } = pod.metadata ?? {};
    if (!name || !namespace) continue;
    const sample = samples.get(`${namespace}/${name}`);
    const containers = Object.entries(sample?.containers ?? {});
    if (!sample || containers.length === 0) continue;
    items.push({
      metadata: { name, namespace, creationTimestamp: now.toISOString(), ...(labels ? { labels } : {}) },
      timestamp: sample.time || now.toISOString(),
      window: "10s",
      containers: containers
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([container, usage]) => ({ name: container, usage: quantities(usage) })),
    });
  }
  return items;
}

export function sendJson(response: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-cache, private",
  });
  response.end(text);
}

/** The Accept header a discovery request of `/apis` goes upstream with: JSON forms only. */
export function jsonOnlyAccept(accept: string | undefined): string | undefined {
  if (!accept) return "application/json";
  const json = accept
    .split(",")
    .map((part) => part.trim())
    .filter((part) => /^application\/json\b/i.test(part) || part === "*/*");
  return json.length > 0 ? json.join(",") : undefined;
}

/**
 * True for a GET of `/apis` (plain, or with client-go's `timeout`) whose client accepts a JSON
 * answer, so the group can be added.
 */
export function isAugmentableDiscovery(request: IncomingMessage, apiPath: string, query: string): boolean {
  const params = [...new URLSearchParams(query).keys()];
  return (
    request.method === "GET" &&
    apiPath === "/apis" &&
    params.every((key) => key === "timeout") &&
    jsonOnlyAccept(request.headers.accept) !== undefined
  );
}

/**
 * Bounds the gateway's own buffering work (metrics answers, discovery rewrites): at most `global`
 * at once, and `perTenant` for one tenant, so no tenant can make Ring0 hold many large bodies.
 * `acquire` answers the release, or undefined when the caller should be told to retry.
 */
export function createBufferingLimiter(limits: { global: number; perTenant: number }) {
  let total = 0;
  const byTenant = new Map<string, number>();
  return {
    acquire(tenant: string): (() => void) | undefined {
      const mine = byTenant.get(tenant) ?? 0;
      if (total >= limits.global || mine >= limits.perTenant) return undefined;
      total += 1;
      byTenant.set(tenant, mine + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total -= 1;
        const left = (byTenant.get(tenant) ?? 1) - 1;
        if (left > 0) byTenant.set(tenant, left);
        else byTenant.delete(tenant);
      };
    },
  };
}

/** The most of a pod list the gateway reads to measure it, and of a discovery it rewrites. */
export const POD_LIST_LIMIT_BYTES = 16 * 1024 * 1024;
export const DISCOVERY_LIMIT_BYTES = 32 * 1024 * 1024;
