import { type BadgeTone, StatusBadge } from "@/components/ui/status-badge";
import styles from "./pod-phase.module.css";

const tones: Record<string, BadgeTone> = {
  Running: "success",
  Succeeded: "success",
  Pending: "progress",
  Terminating: "warning",
  Failed: "failure",
  Unknown: "muted",
};

/**
 * A pod's phase as a badge. A pod the isolation filter refused says so, with why on hover, and
 * with `showReason` also spelled out under the badge (a list row must say what to fix).
 */
export function PodPhase({
  phase,
  refused,
  showReason = false,
}: {
  phase: string;
  refused?: string | null;
  showReason?: boolean;
}) {
  if (refused)
    return (
      <>
        <StatusBadge tone="failure" title={refused}>
          Refused
        </StatusBadge>
        {showReason ? <span className={styles.reason}>{refused}</span> : null}
      </>
    );
  return <StatusBadge tone={tones[phase] ?? "neutral"}>{phase}</StatusBadge>;
}
