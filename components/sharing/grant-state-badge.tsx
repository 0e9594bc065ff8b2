import { Age } from "@/components/nodes/age";
import { StatusBadge } from "@/components/ui/status-badge";
import type { GrantSummary } from "@/server/sharing/resources";
import { granteesText, rulesText, stateLabel, stateTone } from "./grant-text";
import styles from "./sharing.module.css";

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

/** The cells every grants table shows: grantees, what, expiry, state (with why unless active), last used. */
export function GrantSummaryCells({ grant }: { grant: GrantSummary }) {
  return (
    <>
      <td>{granteesText(grant.grantees)}</td>
      <td>{rulesText(grant.rules)}</td>
      <td>
        {grant.expiresAt ? (
          <time dateTime={grant.expiresAt} title={grant.expiresAt} suppressHydrationWarning>
            {new Date(grant.expiresAt).toLocaleString()}
          </time>
        ) : (
          "never"
        )}
      </td>
      <td>
        <GrantStateBadge state={grant.state} message={grant.message} />
        {grant.state === "Active" ? null : <div className={styles.muted}>{grant.message}</div>}
      </td>
      <td>{grant.lastUsedAt ? <Age iso={grant.lastUsedAt} /> : "never"}</td>
    </>
  );
}
