/**
 * The syncer running in this process, if this replica leads. A process slot because Next's route
 * handlers are a separate module graph from the custom server that starts it.
 */
import { processSlot } from "@/server/core/process-slots";
import type { Syncer } from "./syncer";

/** What the console reads of a running syncer. */
export type RunningSyncer = Pick<Syncer, "stats">;

const slot = processSlot<RunningSyncer | null>("syncer");

export function setSyncer(syncer: RunningSyncer | null): void {
  slot.set(syncer);
}

export function getSyncer(): RunningSyncer | null {
  return slot.get() ?? null;
}
