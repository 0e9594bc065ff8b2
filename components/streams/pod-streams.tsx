"use client";

/** A pod's Logs and Shell, as tabs under its status (tenant pods and super-cluster pods). */
import { ExecTerminal } from "@/components/streams/exec-terminal";
import { LogViewer } from "@/components/streams/log-viewer";
import { StreamTabs } from "@/components/streams/stream-tabs";

export function PodStreams({
  source,
  tenant,
  namespace,
  pod,
  containers,
}: {
  source: "tenant-pod" | "super-pod";
  tenant?: string;
  namespace: string;
  pod: string;
  containers: readonly { name: string; restarts: number }[];
}) {
  return (
    <StreamTabs
      label={`Streams of pod ${pod}`}
      tabs={[
        {
          id: "logs",
          title: "Logs",
          content: (
            <LogViewer
              target={{ source, tenant, namespace, pod }}
              containers={containers.map((container) => ({
                name: container.name,
                hasPrevious: container.restarts > 0,
              }))}
              label={`Logs of pod ${pod}`}
            />
          ),
        },
        {
          id: "shell",
          title: "Shell",
          content: (
            <ExecTerminal
              target={{ source, tenant, namespace, pod }}
              containers={containers.map((container) => container.name)}
            />
          ),
        },
      ]}
    />
  );
}
