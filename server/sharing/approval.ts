/**
 * The controller's decisions about a grant against the operator policy in force (pure,
 * unit-tested): what the policy says of it, whether its RBAC belongs in the owner's control plane,
 * and when Ring0 approves it itself (operators do not require approval and it is within policy).
 */
import { expiryOf, type GrantStateDecision, isLive, specHash } from "./grants";
import { checkGrant, type GrantViolation, type SharingPolicyConfig } from "./policy";
import { type SharingPolicyResource, sharingAnnotations } from "./types";

/** Who approved a grant when operators do not require approval. */
export const automaticApprover = "Ring0 (no approval required)";

/**
 * The operator policy's verdict on a grant. An expired grant is judged as it stood just before its
 * expiry, so an expiry in the past is not reported as a violation of a grant that simply ended.
 */
export function policyViolations(
  grant: SharingPolicyResource,
  policy: SharingPolicyConfig,
  now: Date,
): GrantViolation[] {
  const expiry = expiryOf(grant);
  const at = expiry && expiry.getTime() <= now.getTime() ? new Date(expiry.getTime() - 1) : now;
  return checkGrant(grant.spec, policy, at);
}

/**
 * Whether the grant's RBAC belongs in the owner's control plane: live, and within the operator
 * policy in force. An approval does not lift the policy (an operator's annotation written by hand,
 * or a policy tightened after the approval): such a grant gives no access through RBAC.
 */
export function inForce(
  grant: SharingPolicyResource,
  violations: readonly GrantViolation[],
  now: Date,
): boolean {
  return isLive(grant, now) && violations.length === 0;
}

/** Whether Ring0 approves the grant itself: pending, approval not required, within policy. */
export function approvesAutomatically(
  decision: GrantStateDecision,
  policy: SharingPolicyConfig,
  violations: readonly GrantViolation[],
): boolean {
  return decision.state === "PendingApproval" && !policy.requireApproval && violations.length === 0;
}

/** The annotations of an approval of the grant's current spec. */
export function approvalAnnotations(
  grant: SharingPolicyResource,
  by: string,
  now: Date,
): Record<string, string> {
  return {
    [sharingAnnotations.approvedSpec]: specHash(grant.spec),
    [sharingAnnotations.approvedBy]: by,
    [sharingAnnotations.approvedAt]: now.toISOString(),
  };
}
