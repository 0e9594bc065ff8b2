/**
 * The syncer running in this process, if this replica leads. On globalThis because Next's route
 * handlers are a separate module graph from the custom server that starts it.
 */
import type { Syncer } from "./syncer";

/** What the console reads of a running syncer. */
export type RunningSyncer = Pick<Syncer, "stats">;

const key = Symbol.for("ring0.syncer");
const registry = globalThis as { [key]?: RunningSyncer | null };

export function setSyncer(syncer: RunningSyncer | null): void {
  registry[key] = syncer;
}

export function getSyncer(): RunningSyncer | null {
  return registry[key] ?? null;
}
