"use client";

import { useQuery, useSuspenseQuery } from "@tanstack/react-query";
import Link from "next/link";
import { bytesInUse, cores, memory } from "@/components/nodes/format";
import { NodeLogs } from "@/components/streams/node-logs";
import { superPodHref, superPodsHref } from "@/components/super-pods/pod-filter";
import { TenantsOnNode } from "@/components/syncer/tenants-on-node";
import { useTRPC } from "@/components/trpc/client";
import { ConditionsTable } from "@/components/ui/conditions-table";
import { EmptyState } from "@/components/ui/empty-state";
import { PageHeader } from "@/components/ui/page-header";
import { PodTable, podColumns } from "@/components/ui/pod-table";

export function NodeDetail({ name }: { name: string }) {
  const trpc = useTRPC();
  const { data } = useSuspenseQuery({ ...trpc.nodes.get.queryOptions({ name }), refetchInterval: 5_000 });
  const { node, pods } = data;
  const { data: usage } = useQuery({ ...trpc.nodes.usage.queryOptions({ name }), refetchInterval: 5_000 });
  const live = usage?.available ? usage : undefined;
  const podUsage = (pod: { namespace: string; name: string }) => live?.pods[`${pod.namespace}/${pod.name}`];
  return (
    <>
      <PageHeader
        title={`Node ${node.name}`}
        description={`${node.status} · ${node.roles.join(", ")} · ${node.zone ?? "no zone"} · ${node.instanceType ?? "unknown type"} · kubelet ${node.kubeletVersion ?? "?"}`}
      />
      <div className="grid">
        <section className="card" aria-label="CPU">
          <div className="stat-label">CPU allocatable / capacity</div>
          <div className="stat-value">
            {node.allocatable.cpu ?? "—"} / {node.capacity.cpu ?? "—"}
          </div>
        </section>
        <section className="card" aria-label="Memory">
          <div className="stat-label">Memory allocatable / capacity</div>
          <div className="stat-value">
            {memory(node.allocatable.memory)} / {memory(node.capacity.memory)}
          </div>
        </section>
        <section className="card" aria-label="CPU in use">
          <div className="stat-label">CPU in use</div>
          <div className="stat-value">{live ? `${cores(live.usage.cpuCores)} cores` : "—"}</div>
        </section>
        <section className="card" aria-label="Memory in use">
          <div className="stat-label">Memory in use (working set)</div>
          <div className="stat-value">{live ? bytesInUse(live.usage.memoryBytes) : "—"}</div>
        </section>
        <section className="card" aria-label="Pods on node">
          <div className="stat-label">Pods</div>
          <div className="stat-value">
            {node.pods} / {node.capacity.pods ?? "—"}
          </div>
        </section>
      </div>
      <p className="whoami-meta" data-testid="node-usage-source">
        {usage === undefined
          ? "Reading usage…"
          : usage === null || !usage.available
            ? `No usage: ${usage?.reason ?? "the node is gone"}.`
            : `Usage from the kubelet's resource metrics, sampled ${new Date(usage.time).toLocaleTimeString()}.`}
      </p>

      <h2>Conditions</h2>
      <ConditionsTable conditions={node.conditions} timeHeader="Since" />

      <h2 style={{ marginTop: "1.5rem" }}>Labels and taints</h2>
      <ul aria-label="Labels" className="chips">
        {Object.entries(node.labels).map(([key, value]) => (
          <li key={key}>
            <code>
              {key}={value}
            </code>
          </li>
        ))}
      </ul>
      {node.taints.length === 0 ? (
        <p className="whoami-meta">No taints.</p>
      ) : (
        <ul aria-label="Taints" className="chips">
          {node.taints.map((taint) => (
            <li key={`${taint.key}:${taint.effect}`}>
              <code>
                {taint.key}
                {taint.value ? `=${taint.value}` : ""}:{taint.effect}
              </code>
            </li>
          ))}
        </ul>
      )}

      <TenantsOnNode name={node.name} />

      <h2 style={{ marginTop: "1.5rem" }}>Pods on this node</h2>
      <p>
        <Link href={superPodsHref({ node: node.name })}>
          All pods on this node, with their logs and shells
        </Link>
      </p>
      {pods.length === 0 ? (
        <EmptyState title="No pods on this node" />
      ) : (
        <PodTable
          label="Pods on this node"
          pods={pods}
          columns={[
            podColumns.namespace,
            podColumns.name(superPodHref),
            { header: "Phase", cell: (pod) => pod.phase },
            podColumns.ready,
            podColumns.restarts,
            { header: "CPU", cell: (pod) => cores(podUsage(pod)?.cpuCores) },
            { header: "Memory", cell: (pod) => bytesInUse(podUsage(pod)?.memoryBytes) },
            podColumns.age,
          ]}
        />
      )}

      <section aria-labelledby="node-logs-heading" style={{ marginTop: "1.5rem" }}>
        <h2 id="node-logs-heading">Node logs</h2>
        <NodeLogs node={node.name} />
      </section>
    </>
  );
}
