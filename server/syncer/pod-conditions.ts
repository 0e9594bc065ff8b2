/**
 * The conditions Ring0 sets on a tenant pod it does not run, each with an event saying the same:
 * `ring0.dev/Isolation=False` on a pod the isolation filter refused, and the quota condition on a
 * pod held back by the tenant quota (and on its release).
 */
import { recordEvent } from "@/server/k8s/events";
import type { IsolationViolation } from "./contracts";
import { quotaConditionType } from "./quota-hold";
import { type Obj, type SyncContext, syncerComponent, type TenantSession } from "./session";
import type { Json } from "./synced-kinds";
import { patchPodStatus } from "./tenant-pod-writes";
import { isolationConditionType } from "./upward-status";

/** The condition message of a refused pod: the rules it broke, then what to change for each. */
export function isolationMessage(violations: IsolationViolation[]): string {
  const rules = [...new Set(violations.map((violation) => violation.rule))].join(", ");
  return `Refused by ${rules}: ${violations.map((violation) => violation.message).join(" ")}`;
}

/** A refused pod: the Warning event and the isolation condition, once per message. */
export async function reportIsolation(
  ctx: SyncContext,
  session: TenantSession,
  pod: Obj,
  message: string,
): Promise<Json> {
  const conditions = ((pod.status as { conditions?: Json[] } | undefined)?.conditions ?? []) as Json[];
  const existing = conditions.find((condition) => condition.type === isolationConditionType);
  if (existing?.message === message) return existing;
  const namespace = pod.metadata.namespace ?? "";
  await recordEvent(
    session.conn,
    { apiVersion: "v1", kind: "Pod", name: pod.metadata.name, namespace, uid: pod.metadata.uid },
    {
      type: "Warning",
      reason: "IsolationViolation",
      message: `Ring0 will not run this pod on shared nodes: ${message}`,
    },
    { component: syncerComponent, logger: ctx.log },
  );
  const condition = {
    type: isolationConditionType,
    status: "False",
    reason: "IsolationViolation",
    message,
    lastTransitionTime: new Date(ctx.clock.now()).toISOString(),
  };
  await patchPodStatus(session, namespace, pod.metadata.name, { conditions: [condition] }, true);
  return condition;
}

function quotaCondition(pod: Obj): Json | undefined {
  const conditions = ((pod.status as { conditions?: Json[] } | undefined)?.conditions ?? []) as Json[];
  return conditions.find((condition) => condition.type === quotaConditionType);
}

export function quotaHeldBefore(pod: Obj): boolean {
  return quotaCondition(pod)?.status === "True";
}

/** The quota condition on a tenant pod, with an event saying the same; resolves with the condition. */
async function markQuota(
  ctx: SyncContext,
  session: TenantSession,
  pod: Obj,
  held: boolean,
  message: string,
): Promise<Json> {
  const namespace = pod.metadata.namespace ?? "";
  const reason = held ? "QuotaExceeded" : "QuotaAvailable";
  await recordEvent(
    session.conn,
    { apiVersion: "v1", kind: "Pod", name: pod.metadata.name, namespace, uid: pod.metadata.uid },
    { type: held ? "Warning" : "Normal", reason, message },
    { component: syncerComponent, logger: ctx.log },
  );
  const condition = {
    type: quotaConditionType,
    status: held ? "True" : "False",
    reason,
    message,
    lastTransitionTime: new Date(ctx.clock.now()).toISOString(),
  };
  await patchPodStatus(session, namespace, pod.metadata.name, { conditions: [condition] }, true);
  return condition;
}

/** A held pod (or resize): the QuotaExceeded event and condition, once per message; resolves with it. */
export async function reportQuotaHold(
  ctx: SyncContext,
  session: TenantSession,
  pod: Obj,
  message: string,
): Promise<Json> {
  const existing = quotaCondition(pod);
  if (existing?.message === message) return existing;
  return markQuota(ctx, session, pod, true, message);
}

/** A held pod that went down (or was resized): its condition and a Normal event say so. */
export async function releaseQuotaHold(ctx: SyncContext, session: TenantSession, pod: Obj): Promise<void> {
  await markQuota(ctx, session, pod, false, "The tenant quota has room for this pod now; Ring0 started it.");
}
