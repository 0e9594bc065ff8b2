/**
 * Real usage of the super cluster's nodes and their pods, from each kubelet's resource metrics
 * (`/stats/summary?only_cpu_and_memory=true`, read through the API server's node proxy, as
 * metrics-server does). Simulated (kwok) nodes run nothing, so they have no usage to show. One read
 * per node serves every viewer for a few seconds.
 */
import type { ClusterConnection } from "@/server/k8s/cluster";
import { NodeKind, type V1Node } from "@/server/k8s/kinds/node";
import { readSynced, requireSuperCluster } from "@/server/k8s/live";
import { kubeRequest } from "@/server/k8s/transport";

/** CPU in cores and memory (working set) in bytes, as `kubectl top` shows them. */
export interface Usage {
  cpuCores: number;
  memoryBytes: number;
}

/** A pod's usage, in all and per container (by container name). */
export interface PodUsageSample extends Usage {
  time: string;
  containers: Record<string, Usage>;
}

export interface NodeUsage {
  node: string;
  /** When the kubelet sampled it (ISO). */
  time: string;
  usage: Usage;
  /** By "namespace/name" of the super cluster's pods. */
  pods: Record<string, PodUsageSample>;
}

export type NodeUsageResult =
  | ({ available: true } & NodeUsage)
  | { available: false; node: string; reason: string };

interface StatsValue {
  time?: string;
  usageNanoCores?: number;
  workingSetBytes?: number;
}

interface StatsSummary {
  node?: { cpu?: StatsValue; memory?: StatsValue };
  pods?: {
    podRef?: { name?: string; namespace?: string };
    cpu?: StatsValue;
    memory?: StatsValue;
    containers?: { name?: string; cpu?: StatsValue; memory?: StatsValue }[];
  }[];
}

const usageOf = (cpu: StatsValue | undefined, memory: StatsValue | undefined): Usage => ({
  cpuCores: Math.max(0, (cpu?.usageNanoCores ?? 0) / 1e9),
  memoryBytes: Math.max(0, memory?.workingSetBytes ?? 0),
});

/** A kubelet's stats summary as usage (pure). */
export function parseStatsSummary(node: string, summary: StatsSummary): NodeUsage {
  const pods: Record<string, PodUsageSample> = {};
  for (const pod of summary.pods ?? []) {
    const { namespace, name } = pod.podRef ?? {};
    if (!namespace || !name) continue;
    const containers: Record<string, Usage> = {};
    for (const container of pod.containers ?? [])
      if (container.name) containers[container.name] = usageOf(container.cpu, container.memory);
    pods[`${namespace}/${name}`] = {
      ...usageOf(pod.cpu, pod.memory),
      time: pod.cpu?.time ?? pod.memory?.time ?? summary.node?.cpu?.time ?? "",
      containers,
    };
  }
  return {
    node,
    time: summary.node?.cpu?.time ?? summary.node?.memory?.time ?? "",
    usage: usageOf(summary.node?.cpu, summary.node?.memory),
    pods,
  };
}

/** kwok's own mark on the nodes it simulates. */
export function isSimulatedNode(node: V1Node): boolean {
  return node.metadata?.annotations?.["kwok.x-k8s.io/node"] === "fake";
}

const CACHE_MS = 4_000;
const cache = new Map<string, { at: number; result: Promise<NodeUsageResult> }>();

async function readUsage(conn: ClusterConnection, node: V1Node): Promise<NodeUsageResult> {
  const name = node.metadata?.name ?? "";
  if (isSimulatedNode(node))
    return { available: false, node: name, reason: "a simulated node runs no containers" };
  try {
    const summary = await kubeRequest<StatsSummary>(conn, {
      path: `/api/v1/nodes/${encodeURIComponent(name)}/proxy/stats/summary`,
      query: { only_cpu_and_memory: "true" },
      timeoutMs: 5_000,
    });
    return { available: true, ...parseStatsSummary(name, summary) };
  } catch (error) {
    return {
      available: false,
      node: name,
      reason: `its kubelet's metrics could not be read: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/** Usage of the named nodes of the super cluster (unknown names are left out). */
export async function nodesUsage(names?: string[]): Promise<NodeUsageResult[]> {
  const conn = requireSuperCluster();
  const informer = NodeKind.informer(conn);
  const nodes = await readSynced([informer], "node usage", () => informer.snapshot());
  const wanted = names ? nodes.filter((node) => names.includes(node.metadata?.name ?? "")) : nodes;
  const now = Date.now();
  return Promise.all(
    wanted.map((node) => {
      const key = `${conn.server} ${node.metadata?.name}`;
      const hit = cache.get(key);
      if (hit && now - hit.at < CACHE_MS) return hit.result;
      const result = readUsage(conn, node);
      cache.set(key, { at: now, result });
      return result;
    }),
  );
}

export async function nodeUsage(name: string): Promise<NodeUsageResult | undefined> {
  return (await nodesUsage([name]))[0];
}
