import { StatusBadge } from "@/components/ui/status-badge";
import { stateLabel, stateTone } from "./grant-text";

/** A grant's state as a badge, its message (who approved, why pending, when expired) on hover and beside it. */
export function GrantStateBadge({
  state,
  message,
  showMessage = false,
}: {
  state: string;
  message: string;
  showMessage?: boolean;
}) {
  return (
    <span data-testid="grant-state" data-state={state}>
      <StatusBadge tone={stateTone(state)} title={message}>
        {stateLabel[state] ?? state}
      </StatusBadge>
      {showMessage ? (
        <span style={{ marginLeft: "0.4rem", color: "var(--muted)", fontSize: "0.85rem" }}>{message}</span>
      ) : null}
    </span>
  );
}
