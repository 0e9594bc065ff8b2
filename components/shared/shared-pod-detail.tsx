"use client";

import { useSuspenseQuery } from "@tanstack/react-query";
import { ExecTerminal } from "@/components/streams/exec-terminal";
import { LogViewer } from "@/components/streams/log-viewer";
import { type StreamTab, StreamTabs } from "@/components/streams/stream-tabs";
import { useTRPC } from "@/components/trpc/client";
import { ContainersSection } from "@/components/workloads/containers-table";
import { ControlPlaneNotServing } from "@/components/workloads/not-serving";
import { PodStatusCard } from "@/components/workloads/pod-status";

/**
 * A pod of a namespace another tenant shares with the user: its status and containers, and the
 * streams the grants allow — Logs when they include `get pods/log`, Shell only with `create
 * pods/exec` on it. Both streams are authorised again on open and close when the grant ends.
 */
export function SharedPodDetail({
  owner,
  namespace,
  name,
  canReadLogs,
  canExec,
}: {
  owner: string;
  namespace: string;
  name: string;
  canReadLogs: boolean;
  canExec: boolean;
}) {
  const trpc = useTRPC();
  const { data, error } = useSuspenseQuery({
    ...trpc.workloads.pods.get.queryOptions({ tenant: owner, namespace, name }),
    refetchInterval: 5_000,
  });
  if (data.state === "not-serving")
    return <ControlPlaneNotServing phase={data.phase} message={data.message} />;
  const { pod } = data;
  const target = { source: "tenant-pod" as const, tenant: owner, namespace, pod: name };
  const tabs: StreamTab[] = [
    ...(canReadLogs
      ? [
          {
            id: "logs",
            title: "Logs",
            content: (
              <LogViewer
                target={target}
                containers={pod.containers.map((container) => ({
                  name: container.name,
                  hasPrevious: container.restarts > 0,
                }))}
                label={`Logs of pod ${name}`}
              />
            ),
          },
        ]
      : []),
    ...(canExec
      ? [
          {
            id: "shell",
            title: "Shell",
            content: (
              <ExecTerminal target={target} containers={pod.containers.map((container) => container.name)} />
            ),
          },
        ]
      : []),
  ];

  return (
    <>
      {error ? (
        <p className="alert alert-error" role="alert">
          {error.message}
        </p>
      ) : null}
      <PodStatusCard pod={pod} headingId="shared-pod-status-heading" />

      <ContainersSection id="shared-pod-containers-heading" containers={pod.containers} />

      <section aria-labelledby="shared-pod-streams-heading" style={{ marginTop: "1.5rem" }}>
        <h2 id="shared-pod-streams-heading">{canExec ? "Logs and shell" : "Logs"}</h2>
        {tabs.length > 0 ? (
          <StreamTabs label={`Streams of pod ${name}`} tabs={tabs} />
        ) : (
          <p>What is shared with you does not include this pod's logs or a shell in it.</p>
        )}
      </section>
    </>
  );
}
