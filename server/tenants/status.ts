/**
 * Tenant status as the reconciler writes it: pure functions (unit-tested) that rebuild conditions
 * from what one reconcile observed, with Kubernetes' condition semantics (lastTransitionTime moves
 * only when the status flips; reason and message always reflect the latest observation).
 */

export type ConditionStatus = "True" | "False" | "Unknown";

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export type TenantPhase =
  | "Pending"
  | "Provisioning"
  | "Ready"
  | "Suspended"
  | "Upgrading"
  | "Degraded"
  | "Deleting"
  | "Failed";

export interface TenantStatus {
  phase?: TenantPhase;
  observedGeneration?: number;
  endpoint?: string;
  version?: string;
  provisioner?: string;
  timings?: {
    createdAt?: string;
    provisioningStartedAt?: string;
    controlPlaneReadyAt?: string;
    readyAt?: string;
    lastReadyAt?: string;
  };
  conditions?: Condition[];
}

export const conditionTypes = ["ControlPlaneReady", "DefaultsApplied", "Ready", "Degraded"] as const;
export type ConditionType = (typeof conditionTypes)[number];

export interface ConditionInput {
  type: ConditionType;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/** meta.SetStatusCondition: replace by type, keep lastTransitionTime unless the status flips. */
export function setCondition(
  conditions: Condition[] | undefined,
  input: ConditionInput,
  now: Date,
  generation: number | undefined,
): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((condition) => condition.type === input.type);
  const previous = index >= 0 ? list[index] : undefined;
  const next: Condition = {
    ...input,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastTransitionTime:
      previous && previous.status === input.status ? previous.lastTransitionTime : now.toISOString(),
  };
  if (index >= 0) list[index] = next;
  else list.push(next);
  // Stable order: the documented types first, then anything else another writer added.
  const rank = (type: string) => {
    const position = (conditionTypes as readonly string[]).indexOf(type);
    return position < 0 ? conditionTypes.length : position;
  };
  return list.sort((a, b) => rank(a.type) - rank(b.type));
}

export function conditionOf(status: TenantStatus | undefined, type: string): Condition | undefined {
  return status?.conditions?.find((condition) => condition.type === type);
}

export interface Observed {
  phase: TenantPhase;
  generation?: number;
  controlPlane: Omit<ConditionInput, "type">;
  defaults: Omit<ConditionInput, "type">;
  endpoint?: string;
  version?: string;
  provisioner: string;
  createdAt?: string;
  /** Keeps Ready False for a reason of its own though the control plane serves (a refused version change). */
  blocked?: Omit<ConditionInput, "type" | "status">;
  /**
   * A fault in a control plane that served (a component that exited or stopped answering): True
   * while it lasts, False once it serves again. Absent: the condition is left as it was.
   */
  degraded?: Omit<ConditionInput, "type">;
}

/**
 * The new status from one reconcile's observations. Ready is True only when the control plane
 * serves and its defaults are applied; otherwise it carries the blocking condition's reason.
 */
export function buildStatus(previous: TenantStatus | undefined, observed: Observed, now: Date): TenantStatus {
  const at = now.toISOString();
  let conditions = setCondition(
    previous?.conditions,
    { type: "ControlPlaneReady", ...observed.controlPlane },
    now,
    observed.generation,
  );
  conditions = setCondition(
    conditions,
    { type: "DefaultsApplied", ...observed.defaults },
    now,
    observed.generation,
  );
  const ready = observed.blocked
    ? { status: "False" as const, ...observed.blocked }
    : observed.controlPlane.status === "True" && observed.defaults.status === "True"
      ? {
          status: "True" as const,
          reason: "Ready",
          message: "The control plane serves and its defaults are applied.",
        }
      : observed.controlPlane.status !== "True"
        ? { ...observed.controlPlane, status: observed.controlPlane.status }
        : { ...observed.defaults, status: observed.defaults.status };
  conditions = setCondition(conditions, { type: "Ready", ...ready }, now, observed.generation);
  if (observed.degraded) {
    conditions = setCondition(
      conditions,
      { type: "Degraded", ...observed.degraded },
      now,
      observed.generation,
    );
  }

  const timings = { ...(previous?.timings ?? {}) };
  timings.createdAt ??= observed.createdAt;
  if (observed.phase === "Provisioning") timings.provisioningStartedAt ??= at;
  if (observed.controlPlane.status === "True") timings.controlPlaneReadyAt ??= at;
  if (ready.status === "True") {
    timings.readyAt ??= at;
    if (conditionOf(previous, "Ready")?.status !== "True") timings.lastReadyAt = at;
  }
  const status: TenantStatus = {
    ...previous,
    phase: observed.phase,
    provisioner: observed.provisioner,
    timings,
    conditions,
  };
  if (observed.generation !== undefined) status.observedGeneration = observed.generation;
  if (observed.endpoint) status.endpoint = observed.endpoint;
  if (observed.version) status.version = observed.version;
  return status;
}

/** Status equality ignoring nothing: used to skip writes that would change nothing. */
export function sameStatus(a: TenantStatus | undefined, b: TenantStatus | undefined): boolean {
  return JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});
}

/** The Event for a phase change (a Warning when the tenant failed), or null when the phase held. */
export function phaseChangeEvent(
  previousPhase: TenantPhase | undefined,
  observed: Observed,
  status: TenantStatus,
): { type: "Normal" | "Warning"; reason: string; message: string } | null {
  if (previousPhase === observed.phase) return null;
  return {
    type: observed.phase === "Failed" || observed.phase === "Degraded" ? "Warning" : "Normal",
    reason: observed.phase === "Ready" && previousPhase === "Degraded" ? "Recovered" : observed.phase,
    message: phaseMessage(observed, status),
  };
}

/** What the phase change's Event says: how long a first Ready took, or the condition that explains it. */
export function phaseMessage(observed: Observed, status: TenantStatus): string {
  if (observed.phase === "Ready" && observed.degraded?.reason === "Recovered") {
    return observed.degraded.message;
  }
  if (observed.phase === "Degraded") return observed.degraded?.message ?? observed.controlPlane.message;
  if (observed.phase === "Ready") {
    const created = status.timings?.createdAt ? Date.parse(status.timings.createdAt) : Number.NaN;
    const ready = status.timings?.lastReadyAt ? Date.parse(status.timings.lastReadyAt) : Number.NaN;
    const took =
      Number.isFinite(created) &&
      Number.isFinite(ready) &&
      status.timings?.readyAt === status.timings?.lastReadyAt
        ? ` ${((ready - created) / 1000).toFixed(1)} s after creation`
        : "";
    return `The control plane serves${observed.version ? ` Kubernetes ${observed.version}` : ""} and its defaults are applied${took}.`;
  }
  if (observed.phase === "Provisioning") {
    return `Provisioning a dedicated control plane (${observed.provisioner} provisioner).`;
  }
  if (observed.phase === "Failed" || observed.phase === "Upgrading") {
    return observed.controlPlane.status === "True"
      ? observed.defaults.message
      : observed.controlPlane.message;
  }
  return observed.controlPlane.message;
}
