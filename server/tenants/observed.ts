/**
 * What one tenant reconcile observed, as pure functions of the Tenant, the provisioner's answer and
 * the run's failure count: one function per way a run can end (deleting, provisioner unavailable,
 * version refused, provisioner error, suspended, starting, defaults failed or pending, ready).
 * buildStatus (status.ts) turns the result into the written status; the reconciler only acts.
 */
import type { ControlPlaneFault, ControlPlaneObservation } from "@/server/provisioners/types";
import { type ConditionInput, conditionOf, type Observed, type TenantPhase } from "./status";
import type { TenantResource } from "./tenant-resources";

/** What every observation of a tenant carries, whatever the run saw. */
export type ObservedTenant = Pick<Observed, "generation" | "provisioner" | "createdAt">;

/** A serving control plane at the wanted version, before its defaults are judged. */
export type ObservedServing = Omit<Observed, "phase" | "defaults">;

/** Failures of a key (ReconcileContext.failures) after which a transient problem is reported as Failed. */
const failuresBeforeFailed = 2;

export function observedTenant(tenant: TenantResource, provisioner: string): ObservedTenant {
  const created = tenant.metadata.creationTimestamp;
  return {
    generation: tenant.metadata.generation,
    provisioner,
    createdAt: created ? new Date(created).toISOString() : undefined,
  };
}

/** Whether moving to `version` is an upgrade of a control plane that was ready before at another. */
export function isUpgrade(tenant: TenantResource, version: string): boolean {
  const current = tenant.status?.version?.replace(/^v/, "");
  return Boolean(current && current !== version && tenant.status?.timings?.readyAt);
}

export function phaseWhileStarting(tenant: TenantResource, version: string): TenantPhase {
  return isUpgrade(tenant, version) ? "Upgrading" : "Provisioning";
}

/** Whether the control plane serves the wanted version (one that does not say counts as serving it). */
export function servesVersion(observation: ControlPlaneObservation, version: string): boolean {
  return !observation.version || observation.version.replace(/^v/, "") === version;
}

export const waitingForControlPlane = {
  status: "False" as const,
  reason: "WaitingForControlPlane",
  message: "Defaults are applied once the control plane serves.",
};

export function deleting(common: ObservedTenant): Observed {
  return {
    ...common,
    phase: "Deleting",
    controlPlane: {
      status: "False",
      reason: "Deleting",
      message: "The control plane and all its data are being removed.",
    },
    defaults: { status: "False", reason: "Deleting", message: "The tenant is being deleted." },
  };
}

export function provisionerUnavailable(common: ObservedTenant, enabled: readonly string[]): Observed {
  return {
    ...common,
    phase: "Failed",
    controlPlane: {
      status: "False",
      reason: "ProvisionerUnavailable",
      message: `The "${common.provisioner}" provisioner is not enabled on this Ring0 (enabled: ${enabled.join(", ")}).`,
    },
    defaults: waitingForControlPlane,
  };
}

/** A version Ring0 has no binaries for: the control plane (if any) keeps its version; the change is refused. */
export function unsupportedVersion(
  common: ObservedTenant,
  current: ControlPlaneObservation,
  message: string,
): Observed {
  const running = current.phase === "Running";
  return {
    ...common,
    phase: "Failed",
    controlPlane: running
      ? {
          status: "True",
          reason: "Running",
          message: `Still serving ${current.version ?? "its current version"}.`,
        }
      : { status: "False", reason: "UnsupportedVersion", message },
    defaults: running
      ? { status: "True", reason: "Applied", message: "Defaults are applied." }
      : waitingForControlPlane,
    endpoint: current.endpoint,
    version: current.version,
    // Ready names the version problem even when the control plane still serves.
    blocked: { reason: "UnsupportedVersion", message },
  };
}

/** provisioner.ensure threw: permanently (an invalid spec) or for now. */
export function provisionerFailed(
  tenant: TenantResource,
  common: ObservedTenant,
  version: string,
  failure: { message: string; permanent: boolean; failures: number },
): Observed {
  return {
    ...common,
    phase:
      failure.permanent || failure.failures >= failuresBeforeFailed
        ? "Failed"
        : phaseWhileStarting(tenant, version),
    controlPlane: {
      status: "False",
      reason: failure.permanent ? "InvalidSpec" : "ProvisionerError",
      message: failure.message,
    },
    defaults: waitingForControlPlane,
  };
}

/** Whether a suspended tenant's control plane has stopped. */
export function isStopped(observation: ControlPlaneObservation): boolean {
  return observation.phase === "Stopped" || observation.phase === "Absent";
}

export function suspended(
  tenant: TenantResource,
  common: ObservedTenant,
  version: string,
  observation: ControlPlaneObservation,
): Observed {
  const stopped = isStopped(observation);
  return {
    ...common,
    phase: stopped ? "Suspended" : phaseWhileStarting(tenant, version),
    controlPlane: {
      status: "False",
      reason: "Suspended",
      message: stopped
        ? "Suspended: the control plane is stopped and its data kept. Set spec.suspend to false to resume."
        : "Suspending: stopping the control plane.",
    },
    defaults: {
      status: "Unknown",
      reason: "Suspended",
      message: "Checked again when the tenant resumes.",
    },
  };
}

/** The control plane is not (yet) serving the wanted version: starting, upgrading or failed. */
export function notServing(
  tenant: TenantResource,
  common: ObservedTenant,
  version: string,
  observation: ControlPlaneObservation,
  failures: number,
): Observed {
  const failed = observation.phase === "Failed";
  const upgrade = isUpgrade(tenant, version);
  return {
    ...common,
    phase: failed && failures >= failuresBeforeFailed ? "Failed" : phaseWhileStarting(tenant, version),
    controlPlane: {
      status: "False",
      reason: failed ? "ControlPlaneFailed" : upgrade ? "Upgrading" : "Starting",
      message:
        observation.message ??
        (upgrade ? `Moving the control plane to Kubernetes ${version}.` : "The control plane is starting."),
    },
    defaults: waitingForControlPlane,
    endpoint: observation.endpoint,
  };
}

export function serving(
  common: ObservedTenant,
  observation: ControlPlaneObservation,
  version: string,
): ObservedServing {
  return {
    ...common,
    controlPlane: {
      status: "True",
      reason: "Running",
      message: `Serving Kubernetes ${observation.version ?? version}.`,
    },
    endpoint: observation.endpoint,
    version: observation.version,
  };
}

export function defaultsFailed(
  tenant: TenantResource,
  running: ObservedServing,
  version: string,
  failure: { message: string; failures: number },
): Observed {
  return {
    ...running,
    phase: failure.failures >= failuresBeforeFailed ? "Failed" : phaseWhileStarting(tenant, version),
    defaults: {
      status: "False",
      reason: "ApplyFailed",
      message: `Applying the tenant defaults failed: ${failure.message}`,
    },
  };
}

export function defaultsPending(
  tenant: TenantResource,
  running: ObservedServing,
  version: string,
  pending: string,
): Observed {
  return {
    ...running,
    phase: phaseWhileStarting(tenant, version),
    defaults: { status: "False", reason: "Pending", message: pending },
  };
}

export function ready(running: ObservedServing): Observed {
  return {
    ...running,
    phase: "Ready",
    defaults: {
      status: "True",
      reason: "Applied",
      message:
        "Namespaces, RBAC for admins, members and viewers, and Ring0's protection policy are in place.",
    },
  };
}

/** A fault Ring0's watchdog found in a serving control plane, and when. */
export interface DetectedFault extends ControlPlaneFault {
  at: Date;
}

type ConditionBody = Omit<ConditionInput, "type">;

/** The tenant's Degraded condition while it is True (a fault not healed yet), else undefined. */
export function activeDegradation(tenant: TenantResource): ConditionBody | undefined {
  const condition = conditionOf(tenant.status, "Degraded");
  return condition?.status === "True" ? condition : undefined;
}

/** "kube-controller-manager" → "KubeControllerManager": the component in a condition reason. */
function pascal(component: string): string {
  return component
    .split("-")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

/** What the Degraded condition says of a fault just found: the component is in its reason. */
export function degradedBy(fault: DetectedFault): ConditionBody {
  return {
    status: "True",
    reason: `${pascal(fault.component)}${fault.kind === "exited" ? "Exited" : "Unresponsive"}`,
    message: fault.message,
  };
}

/** A controller manager that is down leaves the API serving: its tenant's users are not cut off. */
function apiServesDespite(degradation: ConditionBody): boolean {
  return degradation.reason.startsWith("KubeControllerManager");
}

/**
 * A control plane that served has a component down: the tenant is Degraded until it serves again;
 * its users get a 503 that says so unless only the controller manager is down (the API serves). Its
 * defaults, in etcd, stay as they were.
 */
export function degraded(
  tenant: TenantResource,
  common: ObservedTenant,
  degradation: ConditionBody,
  now?: ControlPlaneObservation,
): Observed {
  const defaults = conditionOf(tenant.status, "DefaultsApplied");
  const serves = apiServesDespite(degradation) && now?.phase !== "Failed";
  return {
    ...common,
    phase: "Degraded",
    controlPlane: {
      status: serves ? "True" : "False",
      reason: degradation.reason,
      message: `${degradation.message}; Ring0 is restarting it${now?.message ? `. Now: ${now.message}` : "."}`,
    },
    defaults: defaults
      ? { status: defaults.status, reason: defaults.reason, message: defaults.message }
      : waitingForControlPlane,
    endpoint: now?.endpoint ?? tenant.status?.endpoint,
    version: now?.version ?? tenant.status?.version,
    degraded: degradation,
    // Ready stays False while Degraded, whatever the API does.
    blocked: { reason: degradation.reason, message: degradation.message },
  };
}

/** How long a tenant may stay Degraded before it is Failed (Ring0 keeps trying). */
export const DEGRADED_LIMIT_MS = 5 * 60_000;

/**
 * While a fault lasts the tenant stays Degraded, with what this run saw, until the run's retries
 * run out (then the usual Failed). Undefined when nothing is degraded.
 */
export function stillDegraded(
  tenant: TenantResource,
  common: ObservedTenant,
  degradation: (ConditionBody & { lastTransitionTime?: string }) | undefined,
  failures: number,
  seen: ControlPlaneObservation,
  now = new Date(),
): Observed | undefined {
  if (!degradation || failures >= failuresBeforeFailed) return undefined;
  const since = degradation.lastTransitionTime ? Date.parse(degradation.lastTransitionTime) : Number.NaN;
  if (Number.isFinite(since) && now.getTime() - since > DEGRADED_LIMIT_MS) {
    // Healing has not worked for minutes: Failed, still trying (a restart loop, a component that
    // keeps hanging), so operators look; it turns Ready by itself if a later heal works.
    return {
      ...degraded(tenant, common, degradation, seen),
      phase: "Failed",
      controlPlane: {
        status: "False",
        reason: "NotHealed",
        message: `${degradation.message}, and the control plane has not served again for ${Math.round((now.getTime() - since) / 60_000)} minutes although Ring0 keeps restarting it: see Ring0's log.`,
      },
    };
  }
  return degraded(tenant, common, degradation, seen);
}

/** Ready, with the Degraded condition: "Recovered" (how long it took) after a fault, else as it was. */
export function readyAfter(tenant: TenantResource, running: ObservedServing, at: Date): Observed {
  const previous = conditionOf(tenant.status, "Degraded");
  let degradedNow: ConditionBody;
  if (previous?.status === "True") {
    const seconds = Math.max(0, (at.getTime() - Date.parse(previous.lastTransitionTime)) / 1000);
    degradedNow = {
      status: "False",
      reason: "Recovered",
      message: `Serving again ${seconds.toFixed(1)} s after a fault was found at ${previous.lastTransitionTime}: ${previous.message}`,
    };
  } else {
    degradedNow = previous
      ? { status: previous.status, reason: previous.reason, message: previous.message }
      : { status: "False", reason: "Healthy", message: "Every component has served since it started." };
  }
  return { ...ready(running), degraded: degradedNow };
}
