"use client";
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { bytesInUse, cores } from "@/components/nodes/format";
import { PodLogsLink, podKey, WorkloadLogsLink } from "@/components/streams/pod-logs-link";
import { ownerKey, podsByOwner } from "@/components/streams/pod-selection";
import { useTRPC } from "@/components/trpc/client";
import { useLiveQuery } from "@/components/trpc/live-query";
import { EmptyState } from "@/components/ui/empty-state";
import { LiveBadge } from "@/components/ui/live-badge";
import { PodTable, podColumns } from "@/components/ui/pod-table";
import { ControlPlaneNotServing } from "@/components/workloads/not-serving";
import { podStatusColumns, workloadColumn } from "@/components/workloads/pod-status";

/** The tenant's pods as the signed-in user may list them; live over SSE, filtered by namespace here. */
export function TenantPodTable({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const { data, feed } = useLiveQuery(trpc.workloads.pods.list.queryOptions({ tenant }), (onData) =>
    trpc.workloads.pods.watch.subscriptionOptions({ tenant }, { onData }),
  );
  const { data: usage } = useQuery({
    ...trpc.workloads.pods.usage.queryOptions({ tenant }),
    refetchInterval: 10_000,
  });
  const usageOf = (pod: { namespace: string; name: string }) =>
    usage?.state === "serving" ? usage.pods[`${pod.namespace}/${pod.name}`] : undefined;
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
        <PodTable
          label="Pods"
          pods={pods}
          columns={[
            {
              header: <span className="sr-only">Choose for logs</span>,
              cell: (pod) => (
                <input
                  type="checkbox"
                  aria-label={`Choose pod ${pod.name} for logs`}
                  checked={chosen.has(podKey(pod))}
                  onChange={(event) => choose(podKey(pod), event.target.checked)}
                />
              ),
            },
            podColumns.name(
              (pod) =>
                `/t/${tenant}/workloads/${encodeURIComponent(pod.namespace)}/${encodeURIComponent(pod.name)}`,
            ),
            podColumns.namespace,
            workloadColumn((pod, owner) => (
              <WorkloadLogsLink
                tenant={tenant}
                owner={owner}
                pods={byOwner.get(ownerKey(pod.namespace, owner)) ?? []}
              />
            )),
            ...podStatusColumns,
            { header: "CPU", cell: (pod) => cores(usageOf(pod)?.cpuCores) },
            { header: "Memory", cell: (pod) => bytesInUse(usageOf(pod)?.memoryBytes) },
          ]}
        />
      )}
    </section>
  );
}
