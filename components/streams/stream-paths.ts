/** Where the browser opens its streams: same-origin WebSocket URLs for `/ws/logs` and `/ws/exec`. */
import type { ExecShell } from "@/server/core/stream-protocol";

/** The same-origin WebSocket URL for a stream path such as `/ws/logs?…`. */
export function streamUrl(path: string, location: { protocol: string; host: string }): string {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
}

/** A pod's shell, or (operators) a shell on a node through a debug pod Ring0 pins there. */
export type ExecTarget =
  | {
      source: "tenant-pod" | "super-pod";
      tenant?: string;
      namespace: string;
      pod: string;
      container?: string;
    }
  | { source: "node-shell"; node: string; container?: string };

/** The query string of an exec stream (stream-protocol.ts's execQuery). */
export function execStreamPath(query: ExecTarget & { shell: ExecShell; cols: number; rows: number }): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === "") continue;
    params.set(key, String(value));
  }
  return `/ws/exec?${params.toString()}`;
}
