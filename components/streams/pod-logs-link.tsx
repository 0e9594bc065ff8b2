"use client";

/** "Logs of N pods" and a workload's "Logs": open the merged log view of several pods. */
import Link from "next/link";
import type { PodRef } from "@/components/streams/log-export";
import {
  maxPodsPerView,
  type PodOwner,
  podSelectionHref,
  workloadSelection,
} from "@/components/streams/pod-selection";

export const podKey = (pod: PodRef) => `${pod.namespace}/${pod.name}`;

export function PodLogsLink({
  tenant,
  pods,
  chosen,
}: {
  tenant: string;
  /** The pods listed now (a chosen pod that went away is left out). */
  pods: readonly PodRef[];
  chosen: ReadonlySet<string>;
}) {
  const selected = pods.filter((pod) => chosen.has(podKey(pod)));
  if (selected.length === 0) return null;
  if (selected.length > maxPodsPerView)
    return (
      <span className="whoami-meta" role="status">
        Choose at most {maxPodsPerView} pods to read their logs together ({selected.length} chosen).
      </span>
    );
  return (
    <Link className="button" href={podSelectionHref(tenant, selected)}>
      Logs of {selected.length} {selected.length === 1 ? "pod" : "pods"}
    </Link>
  );
}

/**
 * "Logs" of one workload (a pod's controlling owner): its pods merged in one view, capped at
 * `maxPodsPerView` — then the link says how many of how many it opens.
 */
export function WorkloadLogsLink({
  tenant,
  owner,
  pods,
}: {
  tenant: string;
  owner: PodOwner;
  /** Every listed pod with this owner (any namespace filter aside). */
  pods: readonly (PodRef & { owner: PodOwner | null; phase: string; createdAt: string | null })[];
}) {
  const { pods: selected, total } = workloadSelection(pods);
  if (selected.length === 0) return null;
  const capped = total > selected.length;
  return (
    <Link
      href={podSelectionHref(
        tenant,
        selected.map(({ namespace, name }) => ({ namespace, name })),
        { ...owner, total },
      )}
      aria-label={`Logs of ${owner.kind} ${owner.name}`}
      title={
        capped
          ? `${total} pods; a view reads at most ${maxPodsPerView} at once, so this opens ${selected.length} of them`
          : `The logs of its ${total} ${total === 1 ? "pod" : "pods"}, merged by time`
      }
    >
      {capped
        ? `Logs (${selected.length} of ${total} pods)`
        : `Logs (${total} ${total === 1 ? "pod" : "pods"})`}
    </Link>
  );
}
