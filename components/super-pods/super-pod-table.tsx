"use client";

import { useQueryClient, useSuspenseQuery } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import Link from "next/link";
import { useState } from "react";
import { Age } from "@/components/nodes/age";
import {
  filterChoices,
  filterSuperPods,
  noTenant,
  type SuperPodFilter,
  superPodHref,
} from "@/components/super-pods/pod-filter";
import { useTRPC } from "@/components/trpc/client";
import { EmptyState } from "@/components/ui/empty-state";
import { LiveBadge } from "@/components/ui/live-badge";
import { PodPhase } from "@/components/workloads/pod-phase";

/** Every pod of the super cluster, live over SSE, filtered here; each opens its logs and shell. */
export function SuperPodTable({ initialFilter }: { initialFilter: SuperPodFilter }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { data: pods } = useSuspenseQuery(trpc.superPods.list.queryOptions());
  const feed = useSubscription(
    trpc.superPods.watch.subscriptionOptions(undefined, {
      onData: (list) => queryClient.setQueryData(trpc.superPods.list.queryKey(), list),
    }),
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
        <table className="data" aria-label="Super-cluster pods">
          <thead>
            <tr>
              <th scope="col">Namespace</th>
              <th scope="col">Name</th>
              <th scope="col">Phase</th>
              <th scope="col">Node</th>
              <th scope="col">Tenant</th>
              <th scope="col">Ready</th>
              <th scope="col">Restarts</th>
              <th scope="col">Age</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((pod) => (
              <tr key={`${pod.namespace}/${pod.name}`}>
                <td>{pod.namespace}</td>
                <td>
                  <Link href={superPodHref(pod)}>{pod.name}</Link>
                </td>
                <td>
                  <PodPhase phase={pod.phase} />
                </td>
                <td>
                  {pod.node ? (
                    <Link href={`/operator/nodes/${encodeURIComponent(pod.node)}`}>{pod.node}</Link>
                  ) : (
                    "—"
                  )}
                </td>
                <td>
                  {pod.tenant ? (
                    <Link href={`/operator/tenants/${encodeURIComponent(pod.tenant)}`}>{pod.tenant}</Link>
                  ) : (
                    "—"
                  )}
                </td>
                <td>{pod.ready}</td>
                <td>{pod.restarts}</td>
                <td>
                  <Age iso={pod.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
