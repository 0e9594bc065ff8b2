/**
 * SharingPolicy status as the controller writes it: pure functions (unit-tested) that rebuild the
 * state and conditions from what one reconcile observed, with Kubernetes' condition semantics
 * (lastTransitionTime moves only when the status flips), and the Events a change is worth.
 * Everything else in the status — `lastUsedAt`, which the gateway patches, and conditions other
 * writers add — is kept as it was.
 */
import { type GrantStateDecision, specHash } from "./grants";
import { type GrantViolation, violationsMessage } from "./policy";
import {
  type GrantState,
  type SharingCondition,
  type SharingPolicyResource,
  type SharingStatus,
  sharingAnnotations,
} from "./types";

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

/** The Events a status write is worth: a state change, and a new refusal or withheld RBAC (once, not at every resync). */
export function statusEvents(
  previous: SharingStatus,
  observed: SharingObserved,
): { type: "Normal" | "Warning"; reason: string; message: string }[] {
  const events: { type: "Normal" | "Warning"; reason: string; message: string }[] = [];
  const change = stateChangeEvent(previous.state, observed);
  if (change) events.push(change);
  const before = previous.conditions?.find((condition) => condition.type === "RBACApplied");
  const warning = { Refused: "RBACRefused", BeyondPolicy: "BeyondPolicy" }[observed.rbac.reason];
  if (warning && before?.message !== observed.rbac.message) {
    events.push({ type: "Warning", reason: warning, message: observed.rbac.message });
  }
  return events;
}

export function policyCondition(violations: readonly GrantViolation[]): SharingConditionInput {
  return violations.length === 0
    ? {
        status: "True",
        reason: "WithinPolicy",
        message: "The grant is within the operators' sharing policy.",
      }
    : { status: "False", reason: "BeyondPolicy", message: violationsMessage(violations) };
}

export function approvedCondition(
  grant: SharingPolicyResource,
  violations: readonly GrantViolation[],
): SharingConditionInput {
  const annotations = grant.metadata.annotations ?? {};
  const approvedSpec = annotations[sharingAnnotations.approvedSpec];
  if (approvedSpec && approvedSpec === specHash(grant.spec)) {
    const at = annotations[sharingAnnotations.approvedAt];
    return {
      status: "True",
      reason: "Approved",
      message: `Approved by ${annotations[sharingAnnotations.approvedBy] ?? "an operator"}${at ? ` at ${at}` : ""}.`,
    };
  }
  if (violations.length > 0) {
    return {
      status: "False",
      reason: "BeyondPolicy",
      message: "The grant breaks the sharing policy, so it cannot be approved; change it to fit the policy.",
    };
  }
  return approvedSpec
    ? {
        status: "False",
        reason: "ChangedSinceApproval",
        message: "The grant changed since it was approved; an operator must approve it again.",
      }
    : {
        status: "False",
        reason: "AwaitingApproval",
        message: "Waiting for an operator to approve the grant.",
      };
}

/** What applying a live grant's RBAC in the owner's control plane came to (owner-rbac.ts applyGrantRbac). */
export interface RbacOutcome {
  /** The Roles' and RoleBindings' name. */
  name: string;
  /** The namespaces the grant names, in order. */
  namespaces: string[];
  /** Namespaces the owner's control plane does not have (nothing applied there). */
  missing: string[];
  /** Objects the owner's control plane refused, each with why. */
  refused: string[];
  /** API groups whose discovery failed, so the wildcard rules do not cover them yet. */
  undiscovered: string[];
}

const quoted = (namespaces: readonly string[]) => namespaces.map((namespace) => `"${namespace}"`).join(", ");

/** RBACApplied for a grant in force: applied, partly applied (namespaces missing) or refused. */
export function rbacAppliedCondition(outcome: RbacOutcome): SharingConditionInput {
  const applied = outcome.namespaces.filter((namespace) => !outcome.missing.includes(namespace));
  if (outcome.refused.length > 0) {
    return {
      status: "False",
      reason: "Refused",
      message: `The owner's control plane refused the grant's RBAC: ${outcome.refused.join("; ")}`,
    };
  }
  if (outcome.missing.length > 0) {
    return {
      status: "False",
      reason: "NamespaceMissing",
      message: `The owner tenant has no namespace ${quoted(outcome.missing)}: nothing is shared there until it exists.${
        applied.length > 0 ? ` Applied in ${quoted(applied)}.` : ""
      }`,
    };
  }
  return {
    status: "True",
    reason: "Applied",
    message: `Role and RoleBinding "${outcome.name}" are in namespace${applied.length === 1 ? "" : "s"} ${quoted(
      applied,
    )} of the owner's control plane.${
      outcome.undiscovered.length
        ? ` The wildcard rules do not cover the API groups whose discovery failed (${outcome.undiscovered.join(", ")}) until it answers again.`
        : ""
    }`,
  };
}

/** RBACApplied for a live grant beyond the policy in force: its RBAC is removed, approved or not. */
export function rbacWithheldCondition(violations: readonly GrantViolation[]): SharingConditionInput {
  return {
    status: "False",
    reason: "BeyondPolicy",
    message: `${violationsMessage(violations)} Approved or not, it gets no Roles or RoleBindings in the owner's control plane.`,
  };
}

/** RBACApplied for a grant that is not live (pending, expired, revoked). */
export function rbacRemovedCondition(decision: GrantStateDecision): SharingConditionInput {
  return {
    status: "False",
    reason: "Removed",
    message: `The grant is ${decision.state === "PendingApproval" ? "pending approval" : decision.state.toLowerCase()}: it has no Roles or RoleBindings in the owner's control plane.`,
  };
}

export function rbacFailedCondition(message: string): SharingConditionInput {
  return {
    status: "False",
    reason: "ApplyFailed",
    message: `Reconciling the grant's RBAC failed: ${message}`,
  };
}

/** RBACApplied and Ready while the owner's control plane is gone or not serving. */
export function ownerUnavailable(
  owner: { gone: boolean; message: string },
  live: boolean,
): Pick<SharingObserved, "rbac" | "blocked"> {
  const reason = owner.gone ? "OwnerNotFound" : "ControlPlaneUnavailable";
  return {
    rbac: { status: live ? "False" : "Unknown", reason, message: owner.message },
    blocked: { reason, message: `${owner.message} The grant takes effect once it serves.` },
  };
}
