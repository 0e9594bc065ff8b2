import type { ReactNode } from "react";
import { Age } from "@/components/nodes/age";
import { type BadgeTone, StatusBadge } from "@/components/ui/status-badge";

export type Condition = {
  type: string;
  status: string;
  reason?: string | null;
  message?: string | null;
  lastTransitionTime?: string | null;
};

/** A Kubernetes conditions table (aria-label "Conditions"), one row per condition type. */
export function ConditionsTable({
  conditions,
  timeHeader,
  statusTone,
  renderTime = (iso) => <Age iso={iso} />,
}: {
  conditions: readonly Condition[];
  /** Header of the last column, e.g. "Last transition" or "Since". */
  timeHeader: string;
  /** When given, the status shows as a badge in this tone; otherwise as plain text. */
  statusTone?: (condition: Condition) => BadgeTone;
  renderTime?: (iso: string | null) => ReactNode;
}) {
  return (
    <table className="data" aria-label="Conditions">
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col">Status</th>
          <th scope="col">Reason</th>
          <th scope="col">Message</th>
          <th scope="col">{timeHeader}</th>
        </tr>
      </thead>
      <tbody>
        {conditions.map((condition) => (
          <tr key={condition.type}>
            <td>{condition.type}</td>
            <td>
              {statusTone ? (
                <StatusBadge tone={statusTone(condition)}>{condition.status}</StatusBadge>
              ) : (
                condition.status
              )}
            </td>
            <td>{condition.reason ?? "—"}</td>
            <td>{condition.message ?? "—"}</td>
            <td>{renderTime(condition.lastTransitionTime ?? null)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The usual tone: True is success, False is failure, anything else neutral. */
export function conditionTone(condition: Condition): BadgeTone {
  return condition.status === "True" ? "success" : condition.status === "False" ? "failure" : "neutral";
}
