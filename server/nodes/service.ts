import { stillStartingMessage } from "@/server/core/start-state";
import { NotFoundError } from "@/server/errors";
import { type ClusterConnection, clusterHealth, clusterVersion, getSuperCluster } from "@/server/k8s/cluster";
import {
  NodeKind,
  type NodeSummary,
  podsPerNode,
  summariseNode,
  type V1Node,
  type V1Pod,
} from "@/server/k8s/kinds/node";
import { byNamespacedName, PodKind, type PodSummary, summarisePod } from "@/server/k8s/kinds/pod";
import { liveView, readSynced, requireSuperCluster } from "@/server/k8s/live";
import { syncLabels } from "@/server/syncer/contracts";

export type PodOnNode = PodSummary;

export interface NodeDetail {
  node: NodeSummary;
  pods: PodOnNode[];
}

export type SuperClusterOverview =
  | ConnectedOverview
  | { connected: false; reason: string /** Ring0 is still starting it (not a fault). */; starting?: boolean };

interface ConnectedOverview {
  connected: true;
  server: string;
  version: string | null;
  health: { ok: boolean; detail: string; latencyMs: number };
  nodes: { total: number; ready: number };
  pods: number;
}

/** One node watch and one pod watch per super cluster, however many views are open. */
function informers(cluster: ClusterConnection) {
  return {
    nodes: NodeKind.informer(cluster),
    pods: PodKind.informer(cluster),
  };
}

function summarise(nodes: V1Node[], pods: V1Pod[]): NodeSummary[] {
  const counts = podsPerNode(pods);
  return nodes
    .map((node) => summariseNode(node, counts.get(node.metadata?.name ?? "") ?? 0))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Reads both informers once synced. */
function withSyncedInformers<T>(read: (nodes: V1Node[], pods: V1Pod[]) => T): Promise<T> {
  const { nodes, pods } = informers(requireSuperCluster());
  return readSynced([nodes, pods], "node list", () => read(nodes.snapshot(), pods.snapshot()));
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
      pods: onNode.map(summarisePod).sort(byNamespacedName),
    };
  });
}

export interface TenantOnNode {
  tenant: string;
  /** The tenant's synced pods bound to the node (any phase). */
  pods: number;
}

/** The tenants whose synced pods (labelled with their tenant by the syncer) are bound to `name`. */
export function tenantsOnNode(name: string): Promise<TenantOnNode[]> {
  return withSyncedInformers((_nodes, pods) => {
    const counts = new Map<string, number>();
    for (const pod of pods) {
      const tenant = pod.metadata?.labels?.[syncLabels.tenant];
      if (tenant && pod.spec?.nodeName === name) counts.set(tenant, (counts.get(tenant) ?? 0) + 1);
    }
    return [...counts]
      .map(([tenant, count]) => ({ tenant, pods: count }))
      .sort((a, b) => a.tenant.localeCompare(b.tenant));
  });
}

/** Live node list (SSE): the full list once synced and again after every node or pod change. */
export function watchNodes(signal: AbortSignal | undefined): AsyncGenerator<NodeSummary[]> {
  const { nodes, pods } = informers(requireSuperCluster());
  return liveView([nodes, pods], "node list", () => summarise(nodes.snapshot(), pods.snapshot()), signal);
}

/** The console's super-cluster card; reports a missing connection instead of failing. */
export async function superClusterOverview(): Promise<SuperClusterOverview> {
  const starting = stillStartingMessage("super-cluster");
  if (starting) return { connected: false, starting: true, reason: starting };
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
