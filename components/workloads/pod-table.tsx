"use client";

import { useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import Link from "next/link";
import { useMemo, useState } from "react";
import { PodLogsLink, podKey, WorkloadLogsLink } from "@/components/streams/pod-logs-link";
import { ownerKey, podsByOwner } from "@/components/streams/pod-selection";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import { LiveBadge } from "@/components/ui/live-badge";
import { ControlPlaneNotServing } from "@/components/workloads/not-serving";
import { PodStatusCells } from "@/components/workloads/pod-status";

/** The tenant's pods as the signed-in user may list them; live over SSE, filtered by namespace here. */
export function PodTable({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data } = useSuspenseQuery(trpc.workloads.pods.list.queryOptions({ tenant }));
  const feed = useSubscription(
    trpc.workloads.pods.watch.subscriptionOptions(
      { tenant },
      { onData: (next) => queryClient.setQueryData(trpc.workloads.pods.list.queryKey({ tenant }), next) },
    ),
  );
  const [namespace, setNamespace] = useState("");
  const byOwner = useMemo(() => (data.state === "serving" ? podsByOwner(data.pods) : new Map()), [data]);
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const choose = (key: string, on: boolean) =>
    setChosen((all) => {
      const next = new Set(all);
      if (on) next.add(key);
      else next.delete(key);
      return next;
    });

  if (data.state === "not-serving")
    return <ControlPlaneNotServing phase={data.phase} message={data.message} />;

  const namespaces = [...new Set(data.pods.map((pod) => pod.namespace))].sort();
  const pods = namespace ? data.pods.filter((pod) => pod.namespace === namespace) : data.pods;

  return (
    <section aria-label="Pods">
      <div className="toolbar">
        <label className="field">
          Namespace
          <select value={namespace} onChange={(event) => setNamespace(event.target.value)}>
            <option value="">All namespaces</option>
            {namespaces.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <LiveBadge subject="Pods" status={feed.status} />
        <PodLogsLink tenant={tenant} pods={pods} chosen={chosen} />
      </div>
      {pods.length === 0 ? (
        <EmptyState title="No pods">
          <p>
            No pods you can see{namespace ? ` in namespace ${namespace}` : ""}. Create one with kubectl, e.g.{" "}
            <code>kubectl run web --image=nginx</code>.
          </p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Pods">
          <thead>
            <tr>
              <th scope="col">
                <span className="sr-only">Choose for logs</span>
              </th>
              <th scope="col">Name</th>
              <th scope="col">Namespace</th>
              <th scope="col">Workload</th>
              <th scope="col">Phase</th>
              <th scope="col">Node</th>
              <th scope="col">Ready</th>
              <th scope="col">Restarts</th>
              <th scope="col">Age</th>
            </tr>
          </thead>
          <tbody>
            {pods.map((pod) => (
              <tr key={`${pod.namespace}/${pod.name}`}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Choose pod ${pod.name} for logs`}
                    checked={chosen.has(podKey(pod))}
                    onChange={(event) => choose(podKey(pod), event.target.checked)}
                  />
                </td>
                <td>
                  <Link
                    href={`/t/${tenant}/workloads/${encodeURIComponent(pod.namespace)}/${encodeURIComponent(pod.name)}`}
                  >
                    {pod.name}
                  </Link>
                </td>
                <td>{pod.namespace}</td>
                <td>
                  {pod.owner ? (
                    <>
                      <span className="whoami-meta">{pod.owner.kind}</span> {pod.owner.name}{" "}
                      <WorkloadLogsLink
                        tenant={tenant}
                        owner={pod.owner}
                        pods={byOwner.get(ownerKey(pod.namespace, pod.owner)) ?? []}
                      />
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
