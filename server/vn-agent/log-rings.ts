/** The log ring of each node's vn-agent in this process (process-wide: Next's route handlers read it). */
import { createLogRing, type LogRing } from "@/server/log-ring";

const ringsKey = Symbol.for("ring0.vnAgentLogRings");
type Holder = { [ringsKey]?: Map<string, LogRing> };

/** The ring of the vn-agent serving `node` in this process (created on first use). */
export function vnAgentLogRing(node: string): LogRing {
  const holder = globalThis as Holder;
  holder[ringsKey] ??= new Map();
  let ring = holder[ringsKey].get(node);
  if (!ring) {
    ring = createLogRing();
    holder[ringsKey].set(node, ring);
  }
  return ring;
}
