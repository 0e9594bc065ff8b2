import { NotFoundError, UnavailableError } from "@/server/errors";
import { type ClusterConnection, clusterHealth, clusterVersion, getSuperCluster } from "@/server/k8s/cluster";
import { type SharedInformer, sharedInformer } from "@/server/k8s/informers";
import { type NodeSummary, podsPerNode, summariseNode, type V1Node, type V1Pod } from "@/server/k8s/nodes";

export interface PodOnNode {
  namespace: string;
  name: string;
  phase: string;
  ready: string;
  restarts: number;
  createdAt: string | null;
}

export interface NodeDetail {
  node: NodeSummary;
  pods: PodOnNode[];
}

export type SuperClusterOverview = ConnectedOverview | { connected: false; reason: string };

interface ConnectedOverview {
  connected: true;
  server: string;
  version: string | null;
  health: { ok: boolean; detail: string; latencyMs: number };
  nodes: { total: number; ready: number };
  pods: number;
}

function superCluster(): ClusterConnection {
  const cluster = getSuperCluster();
  if (!cluster) {
    throw new UnavailableError(
      "The super cluster is not connected. Check SUPER_KUBECONFIG or the local super cluster (npm run cluster:status).",
    );
  }
  return cluster;
}

/** One node watch and one pod watch per super cluster, however many views are open. */
function informers(cluster: ClusterConnection) {
  return {
    nodes: sharedInformer<V1Node>(cluster, { path: "/api/v1/nodes" }),
    pods: sharedInformer<V1Pod>(cluster, { path: "/api/v1/pods" }),
  };
}

function summarise(nodes: V1Node[], pods: V1Pod[]): NodeSummary[] {
  const counts = podsPerNode(pods);
  return nodes
    .map((node) => summariseNode(node, counts.get(node.metadata?.name ?? "") ?? 0))
    .sort((a, b) => a.name.localeCompare(b.name));
}

const syncTimeoutMs = 15_000;

/**
 * Waits for an informer's first list, failing fast with the API's own error (e.g. the server is
 * unreachable) instead of waiting through the informer's retries.
 */
async function synced(informer: SharedInformer<unknown>): Promise<void> {
  const deadline = Date.now() + syncTimeoutMs;
  let done = false;
  const ready = informer.synced().then(() => {
    done = true;
  });
  while (!done) {
    const error = informer.lastError();
    if (error) throw error;
    if (Date.now() > deadline)
      throw new UnavailableError("The super cluster did not answer the node list in time.");
    await Promise.race([ready, new Promise((resolve) => setTimeout(resolve, 100))]);
  }
}

/**
 * Reads both informers, holding a subscription while it waits so the watches stay open for the
 * caller (a synced informer answers from memory; the first caller pays for the initial list).
 */
async function withSyncedInformers<T>(read: (nodes: V1Node[], pods: V1Pod[]) => T): Promise<T> {
  const { nodes, pods } = informers(superCluster());
  const release = [nodes.subscribe(() => {}), pods.subscribe(() => {})];
  try {
    await Promise.all([synced(nodes), synced(pods)]);
    return read(nodes.snapshot(), pods.snapshot());
  } finally {
    for (const unsubscribe of release) unsubscribe();
  }
}

export function listNodes(): Promise<NodeSummary[]> {
  return withSyncedInformers(summarise);
}

export async function getNode(name: string): Promise<NodeDetail> {
  return withSyncedInformers((nodes, pods) => {
    const node = nodes.find((candidate) => candidate.metadata?.name === name);
    if (!node) throw new NotFoundError(`Node "${name}" was not found in the super cluster.`);
    const onNode = pods.filter((pod) => pod.spec?.nodeName === name);
    return {
      node: summariseNode(node, podsPerNode(onNode).get(name) ?? 0),
      pods: onNode
        .map((pod) => {
          const statuses = pod.status?.containerStatuses ?? [];
          return {
            namespace: pod.metadata?.namespace ?? "",
            name: pod.metadata?.name ?? "",
            phase: pod.status?.phase ?? "Unknown",
            ready: `${statuses.filter((status) => status.ready).length}/${pod.spec?.containers.length ?? 0}`,
            restarts: statuses.reduce((sum, status) => sum + status.restartCount, 0),
            createdAt: pod.metadata?.creationTimestamp
              ? new Date(pod.metadata.creationTimestamp).toISOString()
              : null,
          };
        })
        .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`)),
    };
  });
}

/**
 * Live node list: yields the full list once synced and again after every change (coalesced by
 * the informers), until the caller's signal aborts. Only the latest list is kept, so a slow
 * browser skips intermediate states instead of queueing them.
 */
export async function* watchNodes(signal: AbortSignal | undefined): AsyncGenerator<NodeSummary[]> {
  const { nodes, pods } = informers(superCluster());
  let latest: NodeSummary[] | null = null;
  let wake: (() => void) | null = null;
  const changed = () => {
    latest = summarise(nodes.snapshot(), pods.snapshot());
    wake?.();
  };
  const release = [nodes.subscribe(changed), pods.subscribe(changed)];
  const aborted = () => wake?.();
  signal?.addEventListener("abort", aborted);
  try {
    await Promise.all([synced(nodes), synced(pods)]);
    latest ??= summarise(nodes.snapshot(), pods.snapshot());
    while (!signal?.aborted) {
      if (latest) {
        const next: NodeSummary[] = latest;
        latest = null;
        yield next;
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
  } finally {
    signal?.removeEventListener("abort", aborted);
    for (const unsubscribe of release) unsubscribe();
  }
}

/** The console's super-cluster card; reports a missing connection instead of failing. */
export async function superClusterOverview(): Promise<SuperClusterOverview> {
  const cluster = getSuperCluster();
  if (!cluster) {
    return {
      connected: false,
      reason: "The super cluster is not connected (see SUPER_KUBECONFIG and /api/ready).",
    };
  }
  const [health, version, nodes] = await Promise.all([
    clusterHealth(cluster),
    clusterVersion(cluster).then(
      (info) => info.gitVersion,
      () => null,
    ),
    withSyncedInformers((nodeList, pods) => ({
      total: nodeList.length,
      ready: summarise(nodeList, []).filter((node) => node.status === "Ready").length,
      pods: pods.filter((pod) => pod.status?.phase !== "Succeeded" && pod.status?.phase !== "Failed").length,
    })).catch(() => ({ total: 0, ready: 0, pods: 0 })),
  ]);
  return {
    connected: true,
    server: cluster.server,
    version,
    health,
    nodes: { total: nodes.total, ready: nodes.ready },
    pods: nodes.pods,
  };
}
