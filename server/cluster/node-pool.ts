/**
 * The Ring0 nodes of the local super cluster, in the running cluster: listed by their label,
 * created from ./nodes.ts's manifest (16 at a time), scaled, waited for until Ready, pointed at
 * ring0-simkubelet's port (`status.daemonEndpoints`, which Ring0 writes because kwok serves none) and
 * tainted as simulated while the cluster has real nodes (./real-node).
 */
import { createObject, deleteObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isAlreadyExists } from "@/server/k8s/errors";
import { NodeKind } from "@/server/k8s/kinds/node";
import { kubeRequest } from "@/server/k8s/transport";
import {
  LOCAL_NODE_LABEL,
  localNodeAddresses,
  localNodeIndex,
  localNodeManifest,
  localNodeName,
  SIMULATED_TAINT,
} from "./nodes";
import { until } from "./process";

/** What new nodes report: the API server's version as their kubelet's, and ring0-simkubelet's port. */
export interface LocalNodeTemplate {
  kubeletVersion: string;
  kubeletPort: number | undefined;
  /** Taint simulated nodes (the cluster has real nodes). */
  simulatedTaint: boolean;
}

const CONCURRENCY = 16;

async function mapLimit<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(limit, queue.length) }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await task(item);
    }),
  );
}

/** Nodes Ring0 created, by index. */
export async function listLocalNodes(conn: ClusterConnection): Promise<Map<number, string>> {
  const list = await kubeRequest<{ items: { metadata: { name: string } }[] }>(conn, {
    path: NodeKind.path(),
    query: { labelSelector: `${LOCAL_NODE_LABEL}=true` },
    timeoutMs: 30_000,
  });
  const byIndex = new Map<number, string>();
  for (const node of list.items) {
    const index = localNodeIndex(node.metadata.name);
    if (index !== undefined) byIndex.set(index, node.metadata.name);
  }
  return byIndex;
}

async function createLocalNodes(conn: ClusterConnection, indices: number[], template: LocalNodeTemplate) {
  await mapLimit(indices, CONCURRENCY, async (index) => {
    try {
      await createObject(
        conn,
        localNodeManifest(index, template.kubeletVersion, template.kubeletPort, template.simulatedTaint),
      );
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  });
}

function missingBelow(count: number, existing: Map<number, string>): number[] {
  return Array.from({ length: count }, (_, index) => index).filter((index) => !existing.has(index));
}

/** Make nodes 0 … count-1 exist (others are left alone). */
export async function ensureLocalNodes(
  conn: ClusterConnection,
  count: number,
  template: LocalNodeTemplate,
): Promise<void> {
  await createLocalNodes(conn, missingBelow(count, await listLocalNodes(conn)), template);
}

/** Add `count` nodes after the highest existing one; resolves with their names. */
export async function addLocalNodes(
  conn: ClusterConnection,
  count: number,
  template: LocalNodeTemplate,
): Promise<string[]> {
  const existing = await listLocalNodes(conn);
  const start = existing.size === 0 ? 0 : Math.max(...existing.keys()) + 1;
  const indices = Array.from({ length: count }, (_, offset) => start + offset);
  await createLocalNodes(conn, indices, template);
  return indices.map(localNodeName);
}

/** Make exactly nodes 0 … count-1 exist. */
export async function scaleLocalNodes(
  conn: ClusterConnection,
  count: number,
  template: LocalNodeTemplate,
): Promise<void> {
  const existing = await listLocalNodes(conn);
  const extra = [...existing.entries()].filter(([index]) => index >= count).map(([, nodeName]) => nodeName);
  await createLocalNodes(conn, missingBelow(count, existing), template);
  await mapLimit(extra, CONCURRENCY, async (nodeName) => {
    await deleteObject(conn, { apiVersion: "v1", kind: "Node", metadata: { name: nodeName } });
  });
}

/** Waits until `count` nodes matching `labelSelector` (default: Ring0's simulated nodes) are Ready. */
export async function waitLocalNodesReady(
  conn: ClusterConnection,
  count: number,
  timeoutMs: number,
  labelSelector = `${LOCAL_NODE_LABEL}=true`,
): Promise<void> {
  if (count === 0) return;
  await until(`${count} nodes (${labelSelector}) becoming Ready`, timeoutMs, async () => {
    const list = await kubeRequest<{
      items: { status?: { conditions?: { type: string; status: string }[] } }[];
    }>(conn, {
      path: NodeKind.path(),
      query: { labelSelector },
      timeoutMs: 30_000,
    });
    const ready = list.items.filter((node) =>
      node.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True"),
    ).length;
    return ready >= count ? true : undefined;
  });
}

/**
 * Every simulated node as `template` says: advertising ring0-simkubelet's port, InternalDNS first
 * in its addresses, and (unless `withTaints` is false) tainted exactly when the cluster has real
 * nodes. Only the nodes that differ are patched.
 */
export async function alignLocalNodes(
  conn: ClusterConnection,
  template: LocalNodeTemplate,
  { withTaints = true }: { withTaints?: boolean } = {},
): Promise<void> {
  const list = await kubeRequest<{
    items: {
      metadata: { name: string };
      spec?: { taints?: { key: string; effect?: string }[] };
      status?: {
        addresses?: { type: string; address: string }[];
        daemonEndpoints?: { kubeletEndpoint?: { Port?: number } };
      };
    }[];
  }>(conn, {
    path: NodeKind.path(),
    query: { labelSelector: `${LOCAL_NODE_LABEL}=true` },
    timeoutMs: 30_000,
  });
  await mapLimit(list.items, CONCURRENCY, async (node) => {
    const name = node.metadata.name;
    const index = localNodeIndex(name) ?? 0;
    const port = template.kubeletPort;
    const addresses = node.status?.addresses ?? [];
    const staleStatus =
      (port !== undefined && node.status?.daemonEndpoints?.kubeletEndpoint?.Port !== port) ||
      addresses[0]?.type !== "InternalDNS";
    if (staleStatus) {
      await kubeRequest(conn, {
        method: "PATCH",
        path: NodeKind.path({ name, subresource: "status" }),
        contentType: "application/merge-patch+json",
        body: {
          status: {
            addresses: localNodeAddresses(index),
            ...(port !== undefined ? { daemonEndpoints: { kubeletEndpoint: { Port: port } } } : {}),
          },
        },
        timeoutMs: 30_000,
      });
    }
    const taints = node.spec?.taints ?? [];
    const tainted = taints.some((taint) => taint.key === SIMULATED_TAINT.key);
    if (withTaints && tainted !== template.simulatedTaint) {
      const others = taints.filter((taint) => taint.key !== SIMULATED_TAINT.key);
      await kubeRequest(conn, {
        method: "PATCH",
        path: NodeKind.path({ name }),
        contentType: "application/merge-patch+json",
        body: { spec: { taints: template.simulatedTaint ? [...others, SIMULATED_TAINT] : others } },
        timeoutMs: 30_000,
      });
    }
  });
}
