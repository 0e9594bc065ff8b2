"use client";
import { Age } from "@/components/nodes/age";
import { useTRPC } from "@/components/trpc/client";
import { useLiveQuery } from "@/components/trpc/live-query";
import { EmptyState } from "@/components/ui/empty-state";
import { LiveBadge } from "@/components/ui/live-badge";

const factsStyle = {
  display: "grid",
  gridTemplateColumns: "max-content 1fr",
  gap: "0.5rem 1.5rem",
  margin: 0,
} as const;

function phaseBadgeClass(phase: string, ready: string): string {
  if (ready === "True") return "badge badge-success";
  if (phase === "Failed") return "badge badge-failure";
  if (phase === "Degraded") return "badge badge-warning";
  return "badge";
}

/** The tenant's control plane as its Tenant object says, kept current over SSE. */
export function ControlPlaneCard({ tenant }: { tenant: string }) {
  const trpc = useTRPC();
  const { data: summary, feed } = useLiveQuery(trpc.controlPlane.summary.queryOptions({ tenant }), (onData) =>
    trpc.controlPlane.watchSummary.subscriptionOptions({ tenant }, { onData }),
  );

  if (summary.state === "absent") {
    return (
      <EmptyState title="No control plane yet — ask an operator">
        <p>
          Tenant {tenant} has no Kubernetes control plane. Once an operator creates it, its status and the
          kubectl endpoint appear here.
        </p>
      </EmptyState>
    );
  }
  if (summary.state === "unknown") {
    return (
      <section className="card" aria-label="Control plane">
        <h2>Control plane</h2>
        <p className="alert alert-error" role="alert">
          Ring0 cannot read this tenant's control plane status right now: {summary.message}
        </p>
      </section>
    );
  }
  return (
    <section className="card" aria-label="Control plane" style={{ marginBottom: "1.25rem" }}>
      <p className="toolbar" style={{ justifyContent: "space-between" }}>
        <strong>Control plane</strong>
        <LiveBadge subject="Control plane status" status={feed.status} />
      </p>
      <dl style={factsStyle}>
        <dt>Phase</dt>
        <dd style={{ margin: 0 }}>
          <span className={phaseBadgeClass(summary.phase, summary.ready)}>{summary.phase}</span>
          {summary.suspended ? " (suspended by an operator)" : ""}
        </dd>
        <dt>Kubernetes version</dt>
        <dd style={{ margin: 0 }}>{summary.version ?? "—"}</dd>
        <dt>kubectl endpoint</dt>
        <dd style={{ margin: 0 }}>
          <code>{summary.gatewayUrl}</code>
        </dd>
        <dt>Ready since</dt>
        <dd style={{ margin: 0 }}>{summary.readySince ? <Age iso={summary.readySince} /> : "not ready"}</dd>
      </dl>
      {summary.ready !== "True" && summary.message ? (
        <p className="alert alert-info" role="status">
          {summary.message}
        </p>
      ) : null}
    </section>
  );
}
