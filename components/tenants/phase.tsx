import { type BadgeTone, StatusBadge } from "@/components/ui/status-badge";
import { formatDuration } from "./provisioning-timeline";

const phaseTones: Record<string, BadgeTone> = {
  Ready: "success",
  Failed: "failure",
  Provisioning: "progress",
  Upgrading: "progress",
  Degraded: "warning",
  Deleting: "warning",
  Suspended: "muted",
  Pending: "neutral",
};

/** A tenant's phase in its colour; a Failed or Degraded tenant says why on hover (the Ready condition's message). */
export function PhaseBadge({ phase, message }: { phase: string; message?: string | null }) {
  return (
    <StatusBadge
      tone={phaseTones[phase] ?? "neutral"}
      title={(phase === "Failed" || phase === "Degraded") && message ? message : undefined}
    >
      {phase}
    </StatusBadge>
  );
}

/** An absolute time, the same on server and browser (UTC, to the second). */
export function Timestamp({ iso }: { iso: string | null }) {
  if (!iso) return <>—</>;
  return <time dateTime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`}</time>;
}

/** How long a tenant took from creation to its first Ready. */
export function timeToReady(createdAt: string | null, readyAt: string | null): string {
  if (!createdAt || !readyAt) return "—";
  return formatDuration(Math.max(0, Date.parse(readyAt) - Date.parse(createdAt)));
}
