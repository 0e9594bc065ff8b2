/** The state of a list's SSE feed: "Live" while it streams, otherwise connecting or paused. */
export function LiveBadge({
  subject,
  status,
}: {
  subject: string;
  status: "idle" | "connecting" | "pending" | "error";
}) {
  const live = status === "pending";
  return (
    <output className="context-badge" aria-label={live ? `${subject}: live` : `${subject}: connecting`}>
      <span className="status-dot" data-state={live ? "live" : status === "error" ? "down" : "connecting"} />
      {live ? "Live" : status === "error" ? "Updates paused" : "Connecting"}
    </output>
  );
}
