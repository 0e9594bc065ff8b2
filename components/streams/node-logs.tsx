"use client";

/** A node's own logs for operators: the vn-agent serving it and its kwok (kubelet) process. */
import { LogViewer } from "@/components/streams/log-viewer";
import { StreamTabs } from "@/components/streams/stream-tabs";

export function NodeLogs({ node }: { node: string }) {
  return (
    <StreamTabs
      label={`Logs of node ${node}`}
      tabs={[
        {
          id: "vn-agent",
          title: "vn-agent log",
          content: <LogViewer target={{ source: "vn-agent", node }} label={`vn-agent log of node ${node}`} />,
        },
        {
          id: "kwok",
          title: "kwok log",
          content: <LogViewer target={{ source: "kwok", node }} label={`kwok log of node ${node}`} />,
        },
      ]}
    />
  );
}
