/** The log ring of each node's vn-agent in this process (process-wide: Next's route handlers read it). */
import { processSlot } from "@/server/core/process-slots";
import { createLogRing, type LogRing } from "@/server/log-ring";

const slot = processSlot<Map<string, LogRing>>("vnAgentLogRings");

/** The ring of the vn-agent serving `node` in this process (created on first use). */
export function vnAgentLogRing(node: string): LogRing {
  const rings = slot.ensure(() => new Map());
  let ring = rings.get(node);
  if (!ring) {
    ring = createLogRing();
    rings.set(node, ring);
  }
  return ring;
}
