/**
 * What of Ring0 is still starting. The custom server listens as soon as its database, IAM and
 * Next are ready; the super cluster and the tenants' runtime (admission, controllers, syncer,
 * vn-agents) come up behind it and say so here, for /api/ready, the console and the messages of
 * requests that need them. A leaf over the process slots, so route bundles reach it cheaply.
 */
import { processSlot } from "./process-slots";

/** The parts that start after the server listens. */
export type StartPart = "super-cluster" | "tenants";

export interface StartPartState {
  state: "starting" | "ready" | "failed";
  /** When it entered this state (ISO 8601). */
  since: string;
  detail?: string;
}

const parts = processSlot<Partial<Record<StartPart, StartPartState>>>("startParts");

export function setStartPart(part: StartPart, state: StartPartState["state"], detail?: string): void {
  parts.set({
    ...parts.get(),
    [part]: { state, since: new Date().toISOString(), ...(detail ? { detail } : {}) },
  });
}

/** A part's state; undefined when this process never started it (route tests, tools). */
export function startPart(part: StartPart): StartPartState | undefined {
  return parts.get()?.[part];
}

/** Parts still starting, in start order. */
export function partsStarting(): StartPart[] {
  const all = parts.get() ?? {};
  return (["super-cluster", "tenants"] as const).filter((part) => all[part]?.state === "starting");
}

/** "Ring0 is still starting (the super cluster, for 4 s); try again in a moment." */
export function stillStartingMessage(part: StartPart): string | undefined {
  const state = startPart(part);
  if (state?.state !== "starting") return undefined;
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(state.since)) / 1000));
  const what = part === "super-cluster" ? "its super cluster" : "its tenants' control planes and controllers";
  return `Ring0 is still starting ${what} (${seconds} s so far); try again in a moment.`;
}
