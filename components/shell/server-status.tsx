"use client";

import { useSubscription } from "@trpc/tanstack-react-query";
import { useTRPC } from "@/components/trpc/client";

/** A live dot fed by the me.events SSE heartbeat: green while the server streams to us. */
export function ServerStatus() {
  const trpc = useTRPC();
  const feed = useSubscription(trpc.me.events.subscriptionOptions({ intervalMs: 15_000 }));
  const state =
    feed.status === "pending" && feed.data ? "live" : feed.status === "error" ? "down" : "connecting";
  const label = state === "live" ? "Live" : state === "down" ? "Disconnected" : "Connecting";
  return (
    <output
      className="context-badge"
      aria-label={`Server connection: ${label}`}
      data-sequence={feed.data?.sequence}
    >
      <span className="status-dot" data-state={state} aria-hidden="true" />
      {label}
    </output>
  );
}
