"use client";

/**
 * The log viewer used everywhere a single log is read: a tenant's pod, a super-cluster pod, a
 * node's vn-agent or kwok. Streams over `/ws/logs`, follows by default, keeps at most `maxLines`.
 */
import { useMemo, useState } from "react";
import type { LogTarget } from "@/components/streams/log-connection";
import { defaultTailLines, LogPanel, WindowControls } from "@/components/streams/log-panel";
import { StreamStatus } from "@/components/streams/stream-status";
import styles from "@/components/streams/streams.module.css";
import { useLogStreams } from "@/components/streams/use-log-streams";

export interface ContainerChoice {
  name: string;
  /** A previous instance exists (the container restarted), so its logs can be read. */
  hasPrevious: boolean;
}

export interface LogViewerProps {
  /** What to read, without container / previous (chosen here) and follow / tail / since (handled here). */
  target: Omit<LogTarget, "container" | "previous">;
  /** The pod's containers; none for node logs. */
  containers?: readonly ContainerChoice[];
  /** Lines held at most; older ones are dropped with a note. */
  maxLines?: number;
  /** The accessible name of the list, e.g. "Logs of pod web". */
  label?: string;
}

export function LogViewer({ target, containers = [], maxLines = 50_000, label }: LogViewerProps) {
  const [container, setContainer] = useState(containers[0]?.name ?? "");
  const [previous, setPrevious] = useState(false);
  const [paused, setPaused] = useState(false);
  const [range, setRange] = useState<{ tailLines: number | undefined; sinceSeconds: number | undefined }>({
    tailLines: defaultTailLines,
    sinceSeconds: undefined,
  });
  const chosen = containers.find((each) => each.name === container);
  const canPrevious = chosen?.hasPrevious ?? false;
  const readPrevious = previous && canPrevious;

  const targetKey = JSON.stringify(target);
  const targets = useMemo(
    () => [
      {
        ...(JSON.parse(targetKey) as LogViewerProps["target"]),
        container: container || undefined,
        previous: readPrevious || undefined,
      },
    ],
    [targetKey, container, readPrevious],
  );
  const streams = useLogStreams(targets, range, { paused, maxLines });
  const status = streams.statuses[0];
  const subject = [
    target.namespace,
    target.pod ?? target.node,
    container,
    ["kwok", "kubelet", "containerd"].includes(target.source) ? target.source : "",
  ]
    .filter(Boolean)
    .join("-");

  return (
    <LogPanel
      streams={streams}
      paused={paused}
      onPausedChange={setPaused}
      subject={subject || target.source}
      label={label ?? "Log lines"}
      status={status ? <StreamStatus status={status} onReconnect={streams.reconnect} /> : null}
      controls={
        <>
          {containers.length > 0 ? (
            <label className="field">
              Container
              <select value={container} onChange={(event) => setContainer(event.target.value)}>
                {containers.map((each) => (
                  <option key={each.name} value={each.name}>
                    {each.name}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          {containers.length > 0 ? (
            <label
              className={styles.check}
              title={
                canPrevious ? undefined : "This container has not restarted; there is no previous instance."
              }
            >
              <input
                type="checkbox"
                checked={readPrevious}
                disabled={!canPrevious}
                onChange={(event) => setPrevious(event.target.checked)}
              />
              Previous container
            </label>
          ) : null}
          <WindowControls tailLines={range.tailLines} sinceSeconds={range.sinceSeconds} onChange={setRange} />
        </>
      }
    />
  );
}
