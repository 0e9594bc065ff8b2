import { type BadgeTone, StatusBadge } from "@/components/ui/status-badge";

const tones: Record<string, BadgeTone> = {
  Running: "success",
  Succeeded: "success",
  Pending: "progress",
  Terminating: "warning",
  Failed: "failure",
  Unknown: "muted",
};

/** A pod's phase as a badge; a pod the isolation filter refused says so, with why on hover. */
export function PodPhase({ phase, refused }: { phase: string; refused?: string | null }) {
  if (refused)
    return (
      <StatusBadge tone="failure" title={refused}>
        Refused
      </StatusBadge>
    );
  return <StatusBadge tone={tones[phase] ?? "neutral"}>{phase}</StatusBadge>;
}
