import type { ReactNode } from "react";
import { Age } from "@/components/nodes/age";
import { type PodColumn, podColumns } from "@/components/ui/pod-table";
import { PodPhase } from "@/components/workloads/pod-phase";
import type { PodRow } from "@/server/workloads/pods";

/** A tenant pod's status columns: phase (with the isolation refusal spelled out), node, ready, restarts, age. */
export const podStatusColumns: readonly PodColumn<PodRow>[] = [
  { header: "Phase", cell: (pod) => <PodPhase phase={pod.phase} refused={pod.refused} showReason /> },
  { header: "Node", cell: (pod) => pod.node ?? "—" },
  podColumns.ready,
  podColumns.restarts,
  podColumns.age,
];

/** The pod's controlling workload (kind and name), followed by `more` (a logs link) when given. */
export function workloadColumn(
  more?: (pod: PodRow, owner: NonNullable<PodRow["owner"]>) => ReactNode,
): PodColumn<PodRow> {
  return {
    header: "Workload",
    cell: (pod) =>
      pod.owner ? (
        <>
          <span className="whoami-meta">{pod.owner.kind}</span> {pod.owner.name}
          {more ? <> {more(pod, pod.owner)}</> : null}
        </>
      ) : (
        "—"
      ),
  };
}

/**
 * A pod page's Status card. Addresses (pod and host IP) only for the tenant's own users: a grantee
 * of another tenant sees nothing of the nodes beyond the vNode's name.
 */
export function PodStatusCard({
  pod,
  headingId,
  addresses,
}: {
  pod: Pick<PodRow, "phase" | "refused" | "node" | "restarts" | "createdAt">;
  headingId: string;
  addresses?: { podIP: string | null; hostIP: string | null };
}) {
  return (
    <section className="card" aria-labelledby={headingId}>
      <h2 id={headingId}>Status</h2>
      <dl
        style={{ display: "grid", gridTemplateColumns: "max-content 1fr", gap: "0.5rem 1.5rem", margin: 0 }}
      >
        <dt>Phase</dt>
        <dd>
          <PodPhase phase={pod.phase} refused={pod.refused} />
        </dd>
        <dt>Node</dt>
        <dd>{pod.node ?? "not scheduled"}</dd>
        {addresses ? (
          <>
            <dt>Pod IP</dt>
            <dd>{addresses.podIP ?? "—"}</dd>
            <dt>Host IP</dt>
            <dd>{addresses.hostIP ?? "—"}</dd>
          </>
        ) : null}
        <dt>Restarts</dt>
        <dd>{pod.restarts}</dd>
        <dt>Age</dt>
        <dd>
          <Age iso={pod.createdAt} />
        </dd>
      </dl>
    </section>
  );
}
