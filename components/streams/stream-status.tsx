"use client";

import type { ConnectionStatus } from "@/components/streams/log-connection";
import styles from "@/components/streams/streams.module.css";

/** A stream's state in words, e.g. "Following" or "Reconnecting: The connection was lost." */
export function statusText(status: ConnectionStatus): string {
  switch (status.phase) {
    case "connecting":
      return "Connecting…";
    case "open":
      if (status.stream === "paused") return "Paused";
      if (status.stream === "ended") return status.message ? `Ended: ${status.message}` : "Ended";
      return "Following";
    case "retrying": {
      const seconds = status.retryAt
        ? Math.max(1, Math.round((status.retryAt - Date.now()) / 1000))
        : undefined;
      return `${status.message ?? "Disconnected."} Reconnecting${seconds ? ` in ${seconds} s` : ""}…`;
    }
    case "closed":
      return status.message ?? "Closed.";
  }
}

const dotState = (status: ConnectionStatus) =>
  status.phase === "open"
    ? "live"
    : status.phase === "connecting"
      ? "connecting"
      : status.tone === "error"
        ? "down"
        : "connecting";

/** The state of one stream, with a way to reconnect when it stopped or is waiting to retry. */
export function StreamStatus({
  status,
  onReconnect,
  name,
}: {
  status: ConnectionStatus;
  onReconnect(): void;
  /** Which stream (a pod's name) when a view has several. */
  name?: string;
}) {
  const problem = status.tone === "error" && status.phase !== "open";
  return (
    <span
      role={problem ? "alert" : "status"}
      data-testid="stream-status"
      data-phase={status.phase}
      className={problem ? styles.problem : undefined}
    >
      <span className="status-dot" data-state={dotState(status)} />
      {name ? <strong>{name}: </strong> : null}
      {statusText(status)}{" "}
      {status.phase === "closed" || status.phase === "retrying" ? (
        <button type="button" className="button" onClick={onReconnect}>
          {status.phase === "closed" ? "Reconnect" : "Reconnect now"}
        </button>
      ) : null}
    </span>
  );
}
