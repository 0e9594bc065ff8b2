/**
 * SharingPolicy status as the controller writes it: pure functions (unit-tested) that rebuild the
 * state and conditions from what one reconcile observed, with Kubernetes' condition semantics
 * (lastTransitionTime moves only when the status flips). Everything else in the status —
 * `lastUsedAt`, which the gateway patches, and conditions other writers add — is kept as it was.
 */
import type { GrantStateDecision } from "./grants";
import type { GrantState, SharingCondition, SharingStatus } from "./types";

export const sharingConditionTypes = ["Approved", "PolicyCompliant", "RBACApplied", "Ready"] as const;
export type SharingConditionType = (typeof sharingConditionTypes)[number];

export interface SharingConditionInput {
  status: SharingCondition["status"];
  reason: string;
  message: string;
}

/** What one reconcile saw of a grant. */
export interface SharingObserved {
  generation?: number;
  /** grantState(grant, now), after any approval this reconcile wrote. */
  decision: GrantStateDecision;
  approved: SharingConditionInput;
  policy: SharingConditionInput;
  rbac: SharingConditionInput;
  /** Why the grant cannot be in force though it is Active (the owner's control plane does not serve). */
  blocked?: Omit<SharingConditionInput, "status">;
}

/** meta.SetStatusCondition: replace by type, keep lastTransitionTime unless the status flips. */
export function setSharingCondition(
  conditions: readonly SharingCondition[] | undefined,
  type: string,
  input: SharingConditionInput,
  now: Date,
  generation: number | undefined,
): SharingCondition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((condition) => condition.type === type);
  const previous = index >= 0 ? list[index] : undefined;
  const next: SharingCondition = {
    type,
    ...input,
    // The CRD requires a non-empty reason.
    reason: input.reason || "Unknown",
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastTransitionTime:
      previous && previous.status === input.status ? previous.lastTransitionTime : now.toISOString(),
  };
  if (index >= 0) list[index] = next;
  else list.push(next);
  // Stable order: the documented types first, then anything another writer added.
  const rank = (candidate: string) => {
    const position = (sharingConditionTypes as readonly string[]).indexOf(candidate);
    return position < 0 ? sharingConditionTypes.length : position;
  };
  return list.sort((a, b) => rank(a.type) - rank(b.type));
}

/**
 * Ready: the grant gives its grantees access right now, as it says. True only for an Active grant
 * whose RBAC is applied; otherwise it carries the reason access is not (or not fully) there.
 */
export function readyCondition(observed: SharingObserved): SharingConditionInput {
  const { decision } = observed;
  if (decision.state !== "Active") {
    // A pending grant beyond policy waits on the grant's owner, not on an operator: say so.
    const beyondPolicy = decision.state === "PendingApproval" && observed.policy.status === "False";
    const reason = beyondPolicy ? observed.policy.reason : decision.reason;
    const message = beyondPolicy ? observed.policy.message : decision.message;
    return { status: "False", reason, message: `${message} The grant gives no access.` };
  }
  if (observed.blocked) return { status: "False", ...observed.blocked };
  if (observed.rbac.status !== "True") return { ...observed.rbac, status: observed.rbac.status };
  return {
    status: "True",
    reason: "Active",
    message: "The grant is in force: its Roles and RoleBindings are in the owner's control plane.",
  };
}

/** The new status from one reconcile's observations; `lastUsedAt` and foreign conditions are kept. */
export function buildSharingStatus(
  previous: SharingStatus | undefined,
  observed: SharingObserved,
  now: Date,
): SharingStatus {
  const generation = observed.generation;
  let conditions = setSharingCondition(previous?.conditions, "Approved", observed.approved, now, generation);
  conditions = setSharingCondition(conditions, "PolicyCompliant", observed.policy, now, generation);
  conditions = setSharingCondition(conditions, "RBACApplied", observed.rbac, now, generation);
  conditions = setSharingCondition(conditions, "Ready", readyCondition(observed), now, generation);
  return { ...previous, state: observed.decision.state, conditions };
}

/** The Event for a state change, or null when the state did not change. */
export function stateChangeEvent(
  previous: GrantState | undefined,
  observed: SharingObserved,
): { type: "Normal" | "Warning"; reason: string; message: string } | null {
  const state = observed.decision.state;
  if (previous === state) return null;
  const beyondPolicy = state === "PendingApproval" && observed.policy.status === "False";
  return {
    type: beyondPolicy ? "Warning" : "Normal",
    reason: beyondPolicy ? observed.policy.reason : state,
    message: beyondPolicy ? observed.policy.message : observed.decision.message,
  };
}
