/**
 * CPU and memory in use by a tenant's pods, as `kubectl top pods` shows them: the pods are listed as
 * the user in the tenant's control plane first (its RBAC decides which pods there are to measure),
 * then each one's copy in the super cluster (the syncer's deterministic name) is looked up in the
 * usage its node's kubelet reports. Nothing of other tenants' pods or of the node as a whole is
 * returned.
 */

import { getSuperCluster } from "@/server/k8s/cluster";
import { PodKind } from "@/server/k8s/kinds/pod";
import { readSynced } from "@/server/k8s/live";
import { nodesUsage, type PodUsageSample, type Usage } from "@/server/nodes/usage";
import { syncAnnotations, syncLabels } from "@/server/syncer/contracts";
import { superNamespace } from "@/server/syncer/naming";
import { type Acting, listPods, type NotServing } from "./pods";

export type PodUsage =
  | { state: "serving"; pods: Record<string, Usage | null>; sampledAt: string | null }
  | NotServing;

/**
 * What the kubelets report for these pods of `tenant` (by the tenant's "namespace/name"; absent
 * when not running on a node that reports usage). The caller has established that the user may
 * list them.
 */
export async function measureTenantPods(
  tenant: string,
  pods: readonly { namespace: string; name: string; uid: string | null }[],
): Promise<Map<string, PodUsageSample>> {
  const measured = new Map<string, PodUsageSample>();
  const superCluster = getSuperCluster();
  // Without a super cluster nothing runs, so there is nothing to measure.
  if (!superCluster || pods.length === 0) return measured;
  const superPods = PodKind.informer(superCluster);
  const placed = await readSynced([superPods], "pod usage", () => {
    const wanted = new Map(pods.map((pod) => [`${superNamespace(tenant, pod.namespace)}/${pod.name}`, pod]));
    const found: { key: string; superKey: string; node: string }[] = [];
    for (const below of superPods.snapshot()) {
      const superKey = `${below.metadata?.namespace}/${below.metadata?.name}`;
      const pod = wanted.get(superKey);
      const node = below.spec?.nodeName;
      // Only this tenant's copy of this very pod (not an earlier pod of the same name).
      const ours =
        below.metadata?.labels?.[syncLabels.tenant] === tenant &&
        pod?.uid !== null &&
        below.metadata?.annotations?.[syncAnnotations.uid] === pod?.uid;
      if (pod && node && ours) found.push({ key: `${pod.namespace}/${pod.name}`, superKey, node });
    }
    return found;
  });
  const nodes = [...new Set(placed.map((pod) => pod.node))];
  const byNode = new Map((await nodesUsage(nodes)).map((result) => [result.node, result]));
  for (const pod of placed) {
    const node = byNode.get(pod.node);
    const sample = node?.available ? node.pods[pod.superKey] : undefined;
    if (sample) measured.set(pod.key, sample);
  }
  return measured;
}

export async function tenantPodUsage(acting: Acting, namespace?: string): Promise<PodUsage> {
  const list = await listPods(acting, namespace);
  if (list.state !== "serving") return list;
  const measured = await measureTenantPods(acting.tenant, list.pods);
  const pods: Record<string, Usage | null> = {};
  let sampledAt: string | null = null;
  for (const pod of list.pods) {
    const key = `${pod.namespace}/${pod.name}`;
    const sample = measured.get(key);
    pods[key] = sample ? { cpuCores: sample.cpuCores, memoryBytes: sample.memoryBytes } : null;
    if (sample && (!sampledAt || sample.time > sampledAt)) sampledAt = sample.time;
  }
  return { state: "serving", pods, sampledAt };
}
