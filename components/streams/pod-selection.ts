/**
 * Which pods a multi-pod log view reads, carried in its URL as `?pod=<namespace>/<name>` (repeated)
 * so the view can be bookmarked and shared. Pure; unit-tested.
 */
import type { PodRef } from "@/components/streams/log-export";

/** Pods one view streams at most (each is a stream counted against the per-user cap). */
export const maxPodsPerView = 10;

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** A pod's controlling owner (its ownerReference with `controller: true`), e.g. a ReplicaSet. */
export interface PodOwner {
  kind: string;
  name: string;
}

/** Which workload a selection is, and how many pods it had when the link was made (shown, not trusted). */
export interface WorkloadOfSelection extends PodOwner {
  total: number;
}

export function podSelectionHref(
  tenant: string,
  pods: readonly PodRef[],
  workload?: WorkloadOfSelection,
): string {
  const params = new URLSearchParams();
  for (const pod of pods) params.append("pod", `${pod.namespace}/${pod.name}`);
  if (workload) {
    params.set("workload", `${workload.kind}/${workload.name}`);
    params.set("of", String(workload.total));
  }
  return `/t/${encodeURIComponent(tenant)}/workloads/logs?${params.toString()}`;
}

const ownerKind = /^[A-Za-z][A-Za-z0-9]{0,62}$/;

/** The `workload` and `of` of a selection's URL; null when absent or malformed (then only pods are shown). */
export function parseWorkloadOfSelection(search: {
  workload?: string | string[];
  of?: string | string[];
}): WorkloadOfSelection | null {
  const workload = typeof search.workload === "string" ? search.workload : undefined;
  const of = typeof search.of === "string" ? Number(search.of) : Number.NaN;
  const [kind = "", name = "", ...rest] = (workload ?? "").split("/");
  if (rest.length > 0 || !ownerKind.test(kind) || !dnsSubdomain.test(name) || name.length > 253) return null;
  if (!Number.isSafeInteger(of) || of < 1) return null;
  return { kind, name, total: of };
}

interface OwnedPod extends PodRef {
  owner: PodOwner | null;
  phase: string;
  createdAt: string | null;
}

/** A workload's key: owners are namespaced, so the same kind and name in two namespaces are two. */
export const ownerKey = (namespace: string, owner: PodOwner) => `${namespace}/${owner.kind}/${owner.name}`;

/** Pods grouped by controlling owner (pods without one are left out). */
export function podsByOwner<T extends OwnedPod>(pods: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const pod of pods) {
    if (!pod.owner) continue;
    const key = ownerKey(pod.namespace, pod.owner);
    const group = groups.get(key);
    if (group) group.push(pod);
    else groups.set(key, [pod]);
  }
  return groups;
}

/**
 * The pods a workload's "Logs" link opens, from one owner's group: at most `maxPodsPerView` of them
 * (running pods first, then the newest), and how many it has in all, so the view can say when
 * some are left out.
 */
export function workloadSelection<T extends OwnedPod>(owned: readonly T[]): { pods: T[]; total: number } {
  const running = (pod: T) => (pod.phase === "Running" ? 0 : 1);
  const sorted = [...owned].sort(
    (a, b) =>
      running(a) - running(b) ||
      (b.createdAt ?? "").localeCompare(a.createdAt ?? "") ||
      a.name.localeCompare(b.name),
  );
  return { pods: sorted.slice(0, maxPodsPerView), total: owned.length };
}

export function parsePodSelection(values: string | string[] | undefined): {
  pods: PodRef[];
  problem?: string;
} {
  const pods: PodRef[] = [];
  const seen = new Set<string>();
  for (const value of typeof values === "string" ? [values] : (values ?? [])) {
    const [namespace = "", name = "", ...rest] = value.split("/");
    if (
      rest.length > 0 ||
      !dnsLabel.test(namespace) ||
      namespace.length > 63 ||
      !dnsSubdomain.test(name) ||
      name.length > 253
    )
      return { pods: [], problem: `"${value}" is not a pod (namespace/name).` };
    if (seen.has(value)) continue;
    seen.add(value);
    pods.push({ namespace, name });
  }
  if (pods.length === 0) return { pods, problem: "Choose pods on the Workloads page first." };
  if (pods.length > maxPodsPerView)
    return { pods: [], problem: `At most ${maxPodsPerView} pods at once (${pods.length} chosen).` };
  return { pods };
}
