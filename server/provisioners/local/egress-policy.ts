/**
 * What a tenant's control plane may dial, decided by Ring0 from what Ring0 knows — never from an
 * address the tenant wrote (issue 23). The tenant's kube-apiserver sends two kinds of egress through
 * its wall (./egress.ts), each with its own socket:
 *
 * - `controlplane`: webhooks configured by URL (CRD conversion, admission). Allowed: Ring0's own
 *   webhook server (the quota webhook), the tenant's own pods, and what the operator allows.
 * - `cluster`: the kubelet client (logs, exec, attach, port-forward, nodes/proxy), pods/proxy and
 *   services/proxy, and webhooks and aggregated APIs configured by Service (the API server runs
 *   with `--enable-aggregator-routing`, so they are dialled at one of the Service's endpoints: a
 *   pod IP). Allowed: the vn-agents Ring0 runs (by the port Ring0 gave them, at `localhost`, the
 *   only address a vNode names), the tenant's own pods, and what the operator allows.
 *
 * "The tenant's own pods" is the super cluster's word, asked at the moment of the connection: a
 * running pod that the syncer created for this tenant (labelled `ring0.dev/tenant`), on a real node,
 * not on the host's network, whose IP is the one dialled. A pod IP the tenant wrote into a pod's
 * status or an EndpointSlice is checked like any other address, so another tenant's pod, Ring0's
 * host, the super cluster's control plane and link-local or metadata addresses are all refused.
 * Names are never resolved: apart from the vn-agents' `localhost`, a target must be an IP address.
 */
import net from "node:net";
import { getWebhookEndpoint } from "@/server/admission/registration";
import { type ClusterConnection, getSuperCluster } from "@/server/k8s/cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { syncLabels, vnAgentEndpoints } from "@/server/syncer/contracts";
import { allowedByOperator, type EgressAllowance, type EgressTarget } from "./egress-allowances";

export type EgressSelection = "controlplane" | "cluster";

export type { EgressAllowance, EgressTarget } from "./egress-allowances";

export type EgressDecision =
  | { allowed: true; dial: EgressTarget; rule: string }
  | {
      allowed: false;
      /** Why, in words that name nothing behind the address (it is audited in the tenant's name). */
      why: string;
      /** What went wrong asking, for Ring0's log only. */
      error?: string;
    };

/** Decides one CONNECT of `tenant`'s control plane. */
export type EgressPolicy = (
  tenant: string,
  selection: EgressSelection,
  target: EgressTarget,
) => Promise<EgressDecision>;

/** Ring0's own webhook server, by the address it listens on. */
function isRing0Webhook(target: EgressTarget): boolean {
  const endpoint = getWebhookEndpoint();
  if (!endpoint) return false;
  const allowed = new URL(endpoint.baseUrl);
  const host = allowed.hostname.replace(/^\[(.*)\]$/, "$1");
  return target.host === host && target.port === Number(allowed.port || 443);
}

/** A vn-agent Ring0 runs: vNodes name `localhost` and the agent's port (./vnode-content.ts). */
function vnAgentPort(target: EgressTarget): number | undefined {
  if (target.host !== "localhost") return undefined;
  for (const endpoint of vnAgentEndpoints().values()) {
    if (endpoint.port === target.port && endpoint.address === undefined) return endpoint.port;
  }
  return undefined;
}

/** Addresses no pod has: never looked up, never dialled. */
const neverPods = new net.BlockList();
neverPods.addSubnet("0.0.0.0", 8, "ipv4");
neverPods.addSubnet("127.0.0.0", 8, "ipv4");
neverPods.addSubnet("169.254.0.0", 16, "ipv4");
neverPods.addSubnet("224.0.0.0", 3, "ipv4");
neverPods.addAddress("::", "ipv6");
neverPods.addAddress("::1", "ipv6");
neverPods.addSubnet("fe80::", 10, "ipv6");
neverPods.addSubnet("ff00::", 8, "ipv6");

interface PodLike {
  metadata?: { labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: { nodeName?: string; hostNetwork?: boolean };
  status?: { phase?: string; podIP?: string; podIPs?: { ip?: string }[] };
}

interface NodeLike {
  metadata?: { annotations?: Record<string, string> };
}

/**
 * Whether `ip` is, right now, the IP of a running pod the syncer created for `tenant` on a real
 * node of the super cluster (not host-networked). Asked of the super cluster at each connection.
 * `starting` counts a pod whose init containers run (phase Pending, its IP given) as well.
 */
export async function isTenantPodIp(
  conn: ClusterConnection,
  tenant: string,
  ip: string,
  options: { starting?: boolean } = {},
): Promise<boolean> {
  const family = net.isIP(ip);
  if (family === 0 || neverPods.check(ip, family === 6 ? "ipv6" : "ipv4")) return false;
  const list = await kubeRequest<{ items?: PodLike[] }>(conn, {
    path: "/api/v1/pods",
    query: {
      fieldSelector: `status.podIP=${ip}`,
      labelSelector: `${syncLabels.tenant}=${tenant},${syncLabels.managed}=true`,
    },
    timeoutMs: 5_000,
  });
  for (const pod of list.items ?? []) {
    const ips = [pod.status?.podIP, ...(pod.status?.podIPs ?? []).map((entry) => entry.ip)];
    if (!ips.includes(ip)) continue;
    if (pod.metadata?.labels?.[syncLabels.tenant] !== tenant) continue;
    const phases = options.starting ? ["Running", "Pending"] : ["Running"];
    if (pod.spec?.hostNetwork || !phases.includes(pod.status?.phase ?? "") || !pod.spec?.nodeName) continue;
    // A terminating pod's IP may already be free on its node, and so another pod's next.
    if (pod.metadata?.deletionTimestamp) continue;
    if (await isRealNode(conn, pod.spec.nodeName)) return true;
  }
  return false;
}

/** Whether a node is simulated or real, remembered a minute per connection and name. */
const realNodes = new WeakMap<ClusterConnection, Map<string, { real: boolean; at: number }>>();
const NODE_MEMORY_MS = 60_000;

async function isRealNode(conn: ClusterConnection, name: string): Promise<boolean> {
  let known = realNodes.get(conn);
  if (!known) {
    known = new Map();
    realNodes.set(conn, known);
  }
  const cached = known.get(name);
  if (cached && Date.now() - cached.at < NODE_MEMORY_MS) return cached.real;
  const node = await kubeRequest<NodeLike>(conn, {
    path: `/api/v1/nodes/${encodeURIComponent(name)}`,
    timeoutMs: 5_000,
  });
  // kwok's simulated nodes run nothing: their pod IPs lead nowhere on this host.
  const real = node.metadata?.annotations?.["kwok.x-k8s.io/node"] !== "fake";
  known.set(name, { real, at: Date.now() });
  return real;
}

export interface EgressPolicyOptions {
  /** The super cluster that says which pods are the tenant's. Default: the process-wide one. */
  superCluster?: () => ClusterConnection | null;
  /** The operator's allowances (RING0_TENANT_EGRESS_ALLOW). */
  allow?: readonly EgressAllowance[];
  /**
   * Each new connection to a pod costs a question to the super cluster: at most this many a second
   * per tenant (default 50, bursts of 200), so a tenant's webhooks cannot load the shared API server.
   */
  lookupsPerSecond?: number;
  lookupBurst?: number;
}

/** A token bucket per key: `take(key)` is false when the key has spent its rate and burst. */
export function tokenBuckets(perSecond: number, burst: number, now: () => number = Date.now) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(key: string): boolean {
      const at = now();
      const bucket = buckets.get(key) ?? { tokens: burst, at };
      bucket.tokens = Math.min(burst, bucket.tokens + ((at - bucket.at) / 1000) * perSecond);
      bucket.at = at;
      buckets.set(key, bucket);
      if (bucket.tokens < 1) return false;
      bucket.tokens -= 1;
      return true;
    },
  };
}

/** Ring0's egress policy for tenant control planes (see the header). */
export function createEgressPolicy(options: EgressPolicyOptions = {}): EgressPolicy {
  const superCluster = options.superCluster ?? getSuperCluster;
  const allow = options.allow ?? [];
  const lookups = tokenBuckets(options.lookupsPerSecond ?? 50, options.lookupBurst ?? 200);
  return async (tenant, selection, target) => {
    if (selection === "controlplane" && isRing0Webhook(target)) {
      return { allowed: true, dial: target, rule: "ring0-webhook" };
    }
    if (selection === "cluster") {
      const port = vnAgentPort(target);
      if (port !== undefined) return { allowed: true, dial: { host: "127.0.0.1", port }, rule: "vn-agent" };
    }
    if (net.isIP(target.host) === 0) return { allowed: false, why: "a name, not an address" };
    if (allowedByOperator(allow, target)) return { allowed: true, dial: target, rule: "operator" };
    const conn = superCluster();
    if (!conn) return { allowed: false, why: "no super cluster to tell the tenant's pods" };
    if (!lookups.take(tenant)) return { allowed: false, why: "too many new connections to pods a second" };
    try {
      if (await isTenantPodIp(conn, tenant, target.host)) {
        return { allowed: true, dial: target, rule: "tenant-pod" };
      }
    } catch (error) {
      return { allowed: false, why: "the super cluster could not be asked", error: (error as Error).message };
    }
    return { allowed: false, why: "not one of the tenant's running pods, nor allowed by the operator" };
  };
}
