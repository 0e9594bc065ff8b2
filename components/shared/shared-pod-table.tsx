"use client";

import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import { LiveBadge } from "@/components/ui/live-badge";
import { PodTable, podColumns } from "@/components/ui/pod-table";
import { ControlPlaneNotServing } from "@/components/workloads/not-serving";
import { podStatusColumns, workloadColumn } from "@/components/workloads/pod-status";
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
        <PodTable
          label="Pods"
          pods={list.pods}
          rowTestId={(pod) => `pod-row-${pod.name}`}
          columns={[
            podColumns.name((pod) => `${base}/${encodeURIComponent(pod.name)}`),
            workloadColumn(),
            ...podStatusColumns,
          ]}
        />
      )}
    </section>
  );
}
