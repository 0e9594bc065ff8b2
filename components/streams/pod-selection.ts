/**
 * Which pods a multi-pod log view reads, carried in its URL as `?pod=<namespace>/<name>` (repeated)
 * so the view can be bookmarked and shared. Pure; unit-tested.
 */
import type { PodRef } from "@/components/streams/log-export";

/** Pods one view streams at most (each is a stream counted against the per-user cap). */
export const maxPodsPerView = 10;

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function podSelectionHref(tenant: string, pods: readonly PodRef[]): string {
  const params = new URLSearchParams();
  for (const pod of pods) params.append("pod", `${pod.namespace}/${pod.name}`);
  return `/t/${encodeURIComponent(tenant)}/workloads/logs?${params.toString()}`;
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
