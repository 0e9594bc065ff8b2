import { Age } from "@/components/nodes/age";
import { PodPhase } from "@/components/workloads/pod-phase";
import type { PodRow } from "@/server/workloads/pods";

/** A pod row's status cells: phase (with the isolation refusal spelled out), node, ready, restarts, age. */
export function PodStatusCells({ pod }: { pod: PodRow }) {
  return (
    <>
      <td>
        <PodPhase phase={pod.phase} refused={pod.refused} showReason />
      </td>
      <td>{pod.node ?? "—"}</td>
      <td>{pod.ready}</td>
      <td>{pod.restarts}</td>
      <td>
        <Age iso={pod.createdAt} />
      </td>
    </>
  );
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
