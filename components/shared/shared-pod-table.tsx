"use client";

import { useSubscription } from "@trpc/tanstack-react-query";
import Link from "next/link";
import { useState } from "react";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import { LiveBadge } from "@/components/ui/live-badge";
import { ControlPlaneNotServing } from "@/components/workloads/not-serving";
import { PodStatusCells } from "@/components/workloads/pod-status";
import type { PodList } from "@/server/workloads/pods";

/**
 * The pods of a namespace another tenant shares with the user, live: the Workloads feed of the
 * owner's control plane, which admits the user only within a live grant. When the grant ends the
 * feed ends with the refusal, shown in place of the pods.
 */
export function SharedPodTable({
  tenant,
  owner,
  namespace,
}: {
  tenant: string;
  owner: string;
  namespace: string;
}) {
  const trpc = useTRPC();
  const [list, setList] = useState<PodList | null>(null);
  const feed = useSubscription(
    trpc.workloads.pods.watch.subscriptionOptions(
      { tenant: owner, namespace },
      { onData: (next) => setList(next) },
    ),
  );

  if (feed.error) {
    return (
      <p className="alert alert-error" role="alert" data-testid="shared-pods-refused">
        {feed.error.message}
      </p>
    );
  }
  if (!list) return <p role="status">Loading pods…</p>;
  if (list.state === "not-serving")
    return <ControlPlaneNotServing phase={list.phase} message={list.message} />;

  const base = `/t/${tenant}/shared/${encodeURIComponent(owner)}/${encodeURIComponent(namespace)}`;
  return (
    <section aria-label="Pods">
      <div className="toolbar">
        <LiveBadge subject="Pods" status={feed.status} />
      </div>
      {list.pods.length === 0 ? (
        <EmptyState title="No pods">
          <p>There are no pods in namespace {namespace} right now.</p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Pods">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Workload</th>
              <th scope="col">Phase</th>
              <th scope="col">Node</th>
              <th scope="col">Ready</th>
              <th scope="col">Restarts</th>
              <th scope="col">Age</th>
            </tr>
          </thead>
          <tbody>
            {list.pods.map((pod) => (
              <tr key={pod.name} data-testid={`pod-row-${pod.name}`}>
                <td>
                  <Link href={`${base}/${encodeURIComponent(pod.name)}`}>{pod.name}</Link>
                </td>
                <td>
                  {pod.owner ? (
                    <>
                      <span className="whoami-meta">{pod.owner.kind}</span> {pod.owner.name}
                    </>
                  ) : (
                    "—"
                  )}
                </td>
                <PodStatusCells pod={pod} />
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
