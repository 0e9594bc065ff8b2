"use client";

/** "Logs of N pods": opens the merged log view of the pods chosen in a list. */
import Link from "next/link";
import type { PodRef } from "@/components/streams/log-export";
import { maxPodsPerView, podSelectionHref } from "@/components/streams/pod-selection";

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
