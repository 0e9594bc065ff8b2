"use client";
import Link from "next/link";
import { Age } from "@/components/nodes/age";
import { memory } from "@/components/nodes/format";
import { useTRPC } from "@/components/trpc/client";
import { useLiveQuery } from "@/components/trpc/live-query";
import { EmptyState } from "@/components/ui/empty-state";
import { LiveBadge } from "@/components/ui/live-badge";

/** The super cluster's nodes, kept current by the nodes.watch SSE feed. */
export function NodeTable() {
  const trpc = useTRPC();
  const { data: nodes, feed } = useLiveQuery(trpc.nodes.list.queryOptions(), (onData) =>
    trpc.nodes.watch.subscriptionOptions(undefined, { onData }),
  );

  return (
    <section aria-label="Nodes">
      <p className="toolbar">
        <LiveBadge subject="Node list" status={feed.status} />
        <span className="whoami-meta">
          {nodes.length} node{nodes.length === 1 ? "" : "s"} ·{" "}
          {nodes.filter((node) => node.status === "Ready").length} ready
        </span>
      </p>
      {nodes.length === 0 ? (
        <EmptyState title="No nodes">
          <p>The super cluster has no nodes yet. Add some with kwokctl or join real nodes.</p>
        </EmptyState>
      ) : (
        <table className="data" aria-label="Nodes">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Roles</th>
              <th scope="col">Zone</th>
              <th scope="col">Instance type</th>
              <th scope="col">CPU (allocatable / capacity)</th>
              <th scope="col">Memory (allocatable / capacity)</th>
              <th scope="col">Pods</th>
              <th scope="col">Age</th>
            </tr>
          </thead>
          <tbody>
            {nodes.map((node) => (
              <tr key={node.name}>
                <td>
                  <Link href={`/operator/nodes/${encodeURIComponent(node.name)}`}>{node.name}</Link>
                </td>
                <td>
                  <span className={`badge ${node.status === "Ready" ? "badge-success" : "badge-failure"}`}>
                    {node.status}
                    {node.unschedulable ? ", cordoned" : ""}
                  </span>
                </td>
                <td>{node.roles.join(", ")}</td>
                <td>{node.zone ?? "—"}</td>
                <td>{node.instanceType ?? "—"}</td>
                <td>
                  {node.allocatable.cpu ?? "—"} / {node.capacity.cpu ?? "—"}
                </td>
                <td>
                  {memory(node.allocatable.memory)} / {memory(node.capacity.memory)}
                </td>
                <td>
                  {node.pods} / {node.capacity.pods ?? "—"}
                </td>
                <td>
                  <Age iso={node.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
