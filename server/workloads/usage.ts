/**
 * CPU and memory in use by a tenant's pods, as `kubectl top pods` shows them: the pods are listed as
 * the user in the tenant's control plane first (its RBAC decides which pods there are to measure),
 * then each one's copy in the super cluster (the syncer's deterministic name) is looked up in the
 * usage its node's kubelet reports. Nothing of other tenants' pods or of the node as a whole is
 * returned.
 */

import { getSuperCluster } from "@/server/k8s/cluster";
import type { V1Pod } from "@/server/k8s/kinds/node";
import { PodKind } from "@/server/k8s/kinds/pod";
import { readSynced } from "@/server/k8s/live";
import { nodesUsage, type Usage } from "@/server/nodes/usage";
import { superNamespace } from "@/server/syncer/naming";
import { type Acting, listPods, type NotServing } from "./pods";

export type PodUsage =
  | { state: "serving"; pods: Record<string, Usage | null>; sampledAt: string | null }
  | NotServing;

export async function tenantPodUsage(acting: Acting, namespace?: string): Promise<PodUsage> {
  const list = await listPods(acting, namespace);
  if (list.state !== "serving") return list;
  const superCluster = getSuperCluster();
  // Without a super cluster nothing runs, so there is nothing to measure.
  if (!superCluster) return { state: "serving", pods: {}, sampledAt: null };
  const superPods = PodKind.informer(superCluster);
  const placed = await readSynced([superPods], "pod usage", () => {
    const wanted = new Map(
      list.pods.map((pod) => [`${superNamespace(acting.tenant, pod.namespace)}/${pod.name}`, pod]),
    );
    const found = new Map<string, V1Pod>();
    for (const below of superPods.snapshot()) {
      const key = `${below.metadata?.namespace}/${below.metadata?.name}`;
      if (wanted.has(key)) found.set(key, below);
    }
    return [...wanted].map(([superKey, pod]) => {
      const below = found.get(superKey);
      return { key: `${pod.namespace}/${pod.name}`, below, node: below?.spec?.nodeName };
    });
  });
  const nodes = [...new Set(placed.flatMap((pod) => (pod.node ? [pod.node] : [])))];
  const usage = nodes.length > 0 ? await nodesUsage(nodes) : [];
  const byNode = new Map(usage.map((result) => [result.node, result]));
  const pods: Record<string, Usage | null> = {};
  let sampledAt: string | null = null;
  for (const pod of placed) {
    const node = pod.node ? byNode.get(pod.node) : undefined;
    const below = pod.below?.metadata;
    const measured =
      node?.available && below?.namespace && below.name
        ? node.pods[`${below.namespace}/${below.name}`]
        : undefined;
    pods[pod.key] = measured ?? null;
    if (measured && node?.available && (!sampledAt || node.time > sampledAt)) sampledAt = node.time;
  }
  return { state: "serving", pods, sampledAt };
}
