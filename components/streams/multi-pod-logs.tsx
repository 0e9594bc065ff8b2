"use client";

/**
 * Several pods' logs in one list, merged by timestamp, each pod in its own colour (e.g. a
 * workload's replicas). One stream per pod, each kept alive and resumed on its own; a pod whose
 * stream fails does not stop the others.
 */
import { useId, useMemo, useState } from "react";
import { type PodRef, podLabels, sourceColour } from "@/components/streams/log-export";
import { defaultTailLines, LogPanel, WindowControls } from "@/components/streams/log-panel";
import { StreamStatus } from "@/components/streams/stream-status";
import styles from "@/components/streams/streams.module.css";
import { useLogStreams } from "@/components/streams/use-log-streams";

export function MultiPodLogs({
  tenant,
  pods,
  maxLines = 50_000,
}: {
  tenant: string;
  pods: readonly PodRef[];
  maxLines?: number;
}) {
  const containerId = useId();
  const [paused, setPaused] = useState(false);
  const [container, setContainer] = useState("");
  const [containerDraft, setContainerDraft] = useState("");
  const [range, setRange] = useState<{ tailLines: number | undefined; sinceSeconds: number | undefined }>({
    tailLines: defaultTailLines,
    sinceSeconds: undefined,
  });
  const podsKey = JSON.stringify(pods.map((pod) => [pod.namespace, pod.name]));
  const targets = useMemo(
    () =>
      (JSON.parse(podsKey) as [string, string][]).map(([namespace, pod]) => ({
        source: "tenant-pod" as const,
        tenant,
        namespace,
        pod,
        container: container || undefined,
      })),
    [podsKey, tenant, container],
  );
  const names = useMemo(
    () =>
      podLabels(
        (JSON.parse(podsKey) as [string, string][]).map(([namespace, name]) => ({ namespace, name })),
      ),
    [podsKey],
  );
  const streams = useLogStreams(targets, range, { paused, maxLines });

  return (
    <LogPanel
      streams={streams}
      paused={paused}
      onPausedChange={setPaused}
      subject={`${tenant}-${pods.length}-pods`}
      label={`Logs of ${pods.length} pods`}
      sourceNames={names}
      status={
        <ul className={styles.legend} aria-label="Pods">
          {names.map((name, source) => {
            const status = streams.statuses[source];
            return (
              <li key={name}>
                <span className={styles.swatch} style={{ background: sourceColour(source) }} />
                {status ? <StreamStatus name={name} status={status} onReconnect={streams.reconnect} /> : name}
              </li>
            );
          })}
        </ul>
      }
      controls={
        <>
          <form
            className="field"
            onSubmit={(event) => {
              event.preventDefault();
              setContainer(containerDraft.trim());
            }}
          >
            <label htmlFor={containerId}>Container (for pods with several)</label>
            <input
              id={containerId}
              value={containerDraft}
              placeholder="default container"
              onChange={(event) => setContainerDraft(event.target.value)}
              onBlur={() => setContainer(containerDraft.trim())}
            />
          </form>
          <WindowControls tailLines={range.tailLines} sinceSeconds={range.sinceSeconds} onChange={setRange} />
        </>
      }
    />
  );
}
