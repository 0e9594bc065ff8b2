"use client";
import Link from "next/link";
import { useState } from "react";
import {
  filterChoices,
  filterSuperPods,
  noTenant,
  type SuperPodFilter,
  superPodHref,
} from "@/components/super-pods/pod-filter";
import { useTRPC } from "@/components/trpc/client";
import { useLiveQuery } from "@/components/trpc/live-query";
import { EmptyState } from "@/components/ui/empty-state";
import { LiveBadge } from "@/components/ui/live-badge";
import { PodTable, podColumns } from "@/components/ui/pod-table";
import { PodPhase } from "@/components/workloads/pod-phase";

/** Every pod of the super cluster, live over SSE, filtered here; each opens its logs and shell. */
export function SuperPodTable({ initialFilter }: { initialFilter: SuperPodFilter }) {
  const trpc = useTRPC();
  const { data: pods, feed } = useLiveQuery(trpc.superPods.list.queryOptions(), (onData) =>
    trpc.superPods.watch.subscriptionOptions(undefined, { onData }),
  );
  const [filter, setFilter] = useState(initialFilter);
  const set = (key: keyof SuperPodFilter) => (value: string) =>
    setFilter((all) => ({ ...all, [key]: value }));
  const { namespaces, tenants } = filterChoices(pods);
  const shown = filterSuperPods(pods, filter);

  return (
    <section aria-label="Super-cluster pods">
      <div className="toolbar">
        <label className="field">
          Namespace
          <select value={filter.namespace} onChange={(event) => set("namespace")(event.target.value)}>
            <option value="">All namespaces</option>
            {namespaces.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          Tenant
          <select value={filter.tenant} onChange={(event) => set("tenant")(event.target.value)}>
            <option value="">All pods</option>
            <option value={noTenant}>No tenant (the super cluster&apos;s own)</option>
            {tenants.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          Search
          <input
            type="search"
            value={filter.text}
            placeholder="name, namespace, node, tenant"
            onChange={(event) => set("text")(event.target.value)}
          />
        </label>
        {filter.node ? (
          <span className="whoami-meta">
            On node <strong>{filter.node}</strong>{" "}
            <button type="button" className="button" onClick={() => set("node")("")}>
              All nodes
            </button>
          </span>
        ) : null}
        <LiveBadge subject="Pod list" status={feed.status} />
        <span className="whoami-meta" role="status">
          {shown.length === pods.length ? `${pods.length} pods` : `${shown.length} of ${pods.length} pods`}
        </span>
      </div>
      {shown.length === 0 ? (
        <EmptyState title="No pods">
          <p>{pods.length === 0 ? "The super cluster has no pods." : "No pod matches these filters."}</p>
        </EmptyState>
      ) : (
        <PodTable
          label="Super-cluster pods"
          pods={shown}
          columns={[
            podColumns.namespace,
            podColumns.name(superPodHref),
            { header: "Phase", cell: (pod) => <PodPhase phase={pod.phase} /> },
            {
              header: "Node",
              cell: (pod) =>
                pod.node ? (
                  <Link href={`/operator/nodes/${encodeURIComponent(pod.node)}`}>{pod.node}</Link>
                ) : (
                  "—"
                ),
            },
            {
              header: "Tenant",
              cell: (pod) =>
                pod.tenant ? (
                  <Link href={`/operator/tenants/${encodeURIComponent(pod.tenant)}`}>{pod.tenant}</Link>
                ) : (
                  "—"
                ),
            },
            podColumns.ready,
            podColumns.restarts,
            podColumns.age,
          ]}
        />
      )}
    </section>
  );
}
