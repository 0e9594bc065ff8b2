"use client";

import { useSuspenseQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/components/trpc/client";

/** Version, health and size of the super cluster, or why it is not connected. */
export function SuperClusterCard() {
  const trpc = useTRPC();
  const { data } = useSuspenseQuery({
    ...trpc.nodes.overview.queryOptions(),
    // Every 2 s while Ring0 is still starting it, so the card turns as soon as it is up.
    refetchInterval: (query) =>
      query.state.data && "starting" in query.state.data && query.state.data.starting ? 2_000 : 10_000,
  });
  if (!data.connected && data.starting) {
    return (
      <section className="card" aria-label="Super cluster">
        <h2>Super cluster</h2>
        <p className="alert" role="status">
          <span className="status-dot" data-state="pending" /> Starting: {data.reason}
        </p>
      </section>
    );
  }
  if (!data.connected) {
    return (
      <section className="card" aria-label="Super cluster">
        <h2>Super cluster</h2>
        <p className="alert alert-error" role="alert">
          {data.reason}
        </p>
      </section>
    );
  }
  return (
    <div className="grid">
      <section className="card" aria-label="Super cluster version">
        <div className="stat-label">Super cluster</div>
        <div className="stat-value">{data.version ?? "unknown"}</div>
        <div className="whoami-meta">{data.server}</div>
      </section>
      <section className="card" aria-label="Super cluster health">
        <div className="stat-label">Health (/readyz)</div>
        <div className="stat-value">
          <span className="status-dot" data-state={data.health.ok ? "live" : "down"} />
          {data.health.ok ? "Healthy" : "Unhealthy"}
        </div>
        <div className="whoami-meta">
          {data.health.ok ? `${data.health.latencyMs} ms` : data.health.detail}
        </div>
      </section>
      <section className="card" aria-label="Node count">
        <div className="stat-label">Nodes ready / total</div>
        <div className="stat-value">
          <Link href="/operator/nodes">
            {data.nodes.ready} / {data.nodes.total}
          </Link>
        </div>
      </section>
      <section className="card" aria-label="Pod count">
        <div className="stat-label">Running pods</div>
        <div className="stat-value">{data.pods}</div>
      </section>
    </div>
  );
}
