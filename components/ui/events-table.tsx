import { Age } from "@/components/nodes/age";
import { StatusBadge } from "@/components/ui/status-badge";

export type KubeEvent = {
  type: string;
  reason: string;
  message: string;
  source?: string | null;
  count: number;
  lastAt: string | null;
};

/** A Kubernetes events table (aria-label "Events"), oldest first; `showSource` adds a Source column. */
export function EventsTable({
  events,
  showSource = false,
}: {
  events: readonly KubeEvent[];
  showSource?: boolean;
}) {
  return (
    <table className="data" aria-label="Events">
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col">Reason</th>
          <th scope="col">Message</th>
          {showSource ? <th scope="col">Source</th> : null}
          <th scope="col">Count</th>
          <th scope="col">Last seen</th>
        </tr>
      </thead>
      <tbody>
        {events.map((event, index) => (
          // Events carry no stable key here; they are listed oldest first and re-read as a whole.
          // biome-ignore lint/suspicious/noArrayIndexKey: ordered list without stable keys
          <tr key={`${index}-${event.reason}`}>
            <td>
              <StatusBadge tone={event.type === "Warning" ? "failure" : "neutral"}>{event.type}</StatusBadge>
            </td>
            <td>{event.reason}</td>
            <td>{event.message}</td>
            {showSource ? <td>{event.source ?? "—"}</td> : null}
            <td>{event.count}</td>
            <td>
              <Age iso={event.lastAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
