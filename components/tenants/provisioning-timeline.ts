/**
 * A tenant's provisioning timeline, built from what its status and Events record: the timings the
 * reconciler keeps (created, provisioning started, control plane ready, ready), the
 * DefaultsApplied condition's transition, and the phase-change Events for everything that
 * happened since (suspended, upgrading, deleting, failed, ready again). Pure, so it is unit-tested.
 */
import type { TenantDetail } from "@/server/tenants/tenant-detail";

export type TimelineState = "done" | "current" | "pending" | "failed";

export interface TimelineStep {
  key: string;
  label: string;
  /** ISO time the step happened; null while it has not. */
  at: string | null;
  /** Milliseconds since the previous step that happened; null for the first or a pending step. */
  sincePreviousMs: number | null;
  state: TimelineState;
  detail: string | null;
}

type TimelineInput = Pick<TenantDetail, "phase" | "timings" | "conditions" | "events" | "createdAt">;

/** Phase-change Events that are steps of their own. */
const laterPhases = new Set([
  "Suspended",
  "Upgrading",
  "Degraded",
  "Recovered",
  "Deleting",
  "Failed",
  "Provisioning",
  "Ready",
]);
// The reconciler writes the status, then records the Event: the first Event this close to a
// recorded timing is that same step, not a new one.
const sameStepWindowMs = 5_000;
// Event times are whole seconds, timings milliseconds: steps are ordered by the second they
// happened in, then by the order they are listed in (the base steps first).
const second = (ms: number) => Math.floor(ms / 1_000);

const time = (iso: string | null | undefined) => (iso ? Date.parse(iso) : Number.NaN);

export function buildTimeline(tenant: TimelineInput): TimelineStep[] {
  const { timings } = tenant;
  const condition = (type: string) => tenant.conditions.find((candidate) => candidate.type === type);
  const defaults = condition("DefaultsApplied");
  // Ready is first written together with DefaultsApplied=True, so readyAt is when the defaults were
  // first in place (the condition's own transition moves again after a suspend and resume).
  const defaultsAt =
    timings.readyAt ??
    (defaults?.status === "True" && defaults.lastTransitionTime ? defaults.lastTransitionTime : null);

  const base: Omit<TimelineStep, "sincePreviousMs" | "state">[] = [
    { key: "created", label: "Created", at: timings.createdAt ?? tenant.createdAt, detail: null },
    {
      key: "provisioning",
      label: "Provisioning started",
      at: timings.provisioningStartedAt,
      detail: null,
    },
    {
      key: "control-plane",
      label: "Control plane serving",
      at: timings.controlPlaneReadyAt,
      detail: null,
    },
    { key: "defaults", label: "Defaults applied", at: defaultsAt, detail: null },
    { key: "ready", label: "Ready", at: timings.readyAt, detail: null },
  ];
  const firstOf: Record<string, string | null> = {
    Provisioning: timings.provisioningStartedAt,
    Ready: timings.readyAt,
  };

  const later: Omit<TimelineStep, "sincePreviousMs" | "state">[] = [];
  const seen = new Set<string>();
  for (const [index, event] of tenant.events.entries()) {
    if (!laterPhases.has(event.reason) || !event.lastAt) continue;
    const first = firstOf[event.reason];
    const isFirst = !seen.has(event.reason);
    seen.add(event.reason);
    if (first !== undefined) {
      // The first Provisioning/Ready Event is the base step itself; a later one follows a resume.
      if (!first) continue;
      if (isFirst && Math.abs(time(event.lastAt) - time(first)) <= sameStepWindowMs) continue;
    }
    const label =
      event.reason === "Ready" ? "Ready again" : event.reason === "Provisioning" ? "Resuming" : event.reason;
    later.push({ key: `event-${index}`, label, at: event.lastAt, detail: event.message || null });
  }

  // The current phase is a step even when its Event was lost or has expired (Events live an hour).
  const lastLater = later.at(-1);
  if (["Suspended", "Upgrading", "Degraded", "Deleting", "Failed"].includes(tenant.phase)) {
    const covered = later.some((step) => step.label === tenant.phase) && lastLater?.label === tenant.phase;
    if (!covered) {
      const ready = condition("Ready");
      later.push({
        key: "phase",
        label: tenant.phase,
        at: ready?.lastTransitionTime ?? null,
        detail: ready?.message ?? null,
      });
    }
  }

  const happened = [...base, ...later]
    .map((step, order) => ({ step, order }))
    .filter(({ step }) => step.at)
    .sort((a, b) => second(time(a.step.at)) - second(time(b.step.at)) || a.order - b.order)
    .map(({ step }) => step);
  const pending = [...base, ...later].filter((step) => !step.at);

  const steps: TimelineStep[] = [];
  let previous: number | null = null;
  for (const step of happened) {
    const at = time(step.at);
    steps.push({
      ...step,
      sincePreviousMs: previous === null ? null : Math.max(0, at - previous),
      state: step.label === "Failed" ? "failed" : "done",
    });
    previous = at;
  }
  // The next step is under way while the tenant is being provisioned; otherwise it waits.
  const working = ["Pending", "Provisioning", "Upgrading"].includes(tenant.phase);
  for (const [index, step] of pending.entries()) {
    const state = step.label === "Failed" ? "failed" : index === 0 && working ? "current" : "pending";
    steps.push({ ...step, sincePreviousMs: null, state });
  }
  return steps;
}

/** "850 ms", "12.4 s", "3 min 5 s", "2 h 10 min". */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1_000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}
