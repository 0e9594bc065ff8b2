"use client";

/**
 * A node's own logs for operators — the vn-agent serving it and its kubelet (a real node's kubelet and
 * containerd, or kwok for a simulated one) — and a shell on the node.
 */
import { ExecTerminal } from "@/components/streams/exec-terminal";
import { LogViewer } from "@/components/streams/log-viewer";
import { StreamTabs } from "@/components/streams/stream-tabs";

/** Ring0's real nodes (this host's kubelets) are named ring0-real-<i> (server/cluster/real-node/plan.ts). */
const isRealNode = (node: string) => /^ring0-real-(0|[1-9]\d*)$/.test(node);

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
        ...(isRealNode(node)
          ? [
              {
                id: "kubelet",
                title: "kubelet log",
                content: (
                  <LogViewer target={{ source: "kubelet", node }} label={`kubelet log of node ${node}`} />
                ),
              },
              {
                id: "containerd",
                title: "containerd log",
                content: (
                  <LogViewer
                    target={{ source: "containerd", node }}
                    label={`containerd log of node ${node}`}
                  />
                ),
              },
            ]
          : [
              {
                id: "kwok",
                title: "kwok log",
                content: <LogViewer target={{ source: "kwok", node }} label={`kwok log of node ${node}`} />,
              },
            ]),
        {
          id: "shell",
          title: "Node shell",
          content: (
            <>
              <p className="alert alert-info">
                Connecting starts a debug pod pinned to this node in <code>ring0-system</code> (host PID,
                network and IPC; the node&apos;s filesystem at <code>/host</code>), as{" "}
                <code>kubectl debug node</code> does. The session is recorded and audited, ends at the maximum
                session length, and the pod is deleted when the shell ends.
              </p>
              <ExecTerminal target={{ source: "node-shell", node }} containers={["shell"]} />
            </>
          ),
        },
      ]}
    />
  );
}
