/**
 * A Ring0 user reaching another tenant through sharing grants: the one decision every path takes
 * (the gateway, tRPC, log and exec streams), from the live grants and the clock. Who is not a
 * grantee of the owner at all gets the answer of a tenant that does not exist, so a third tenant
 * cannot even learn the owner exists.
 */
import { isOperator, type SessionUser } from "@/server/core/roles";
import { authorizeByGrants, type GranteeUser, grantsFor } from "./grants";
import { allGrants, watchGrantedAccess } from "./live";
import { checkGrant, policyDenies, type SharingPolicyConfig } from "./policy";
import { type RequestAttributes, resourceKey } from "./request-info";
import { sharingPolicy } from "./settings";
import type { SharingPolicyResource } from "./types";
import { type GrantUse, grantUsage } from "./usage";

/**
 * The grants of `owner` that give `user` access now: live (approved for their spec, not revoked,
 * not expired) and within the operator policy in force — an approval never lifts the policy, and
 * a policy tightened later takes effect at once (the controller removes their RBAC the same way).
 */
export function grantsInForce(
  grants: readonly SharingPolicyResource[],
  owner: string,
  user: GranteeUser,
  now: Date,
  policy: SharingPolicyConfig = sharingPolicy(),
): SharingPolicyResource[] {
  return grantsFor(grants, owner, user, now).filter(
    (grant) => checkGrant(grant.spec, policy, now).length === 0,
  );
}

/**
 * The operator policy on the request itself: a wildcard rule (where the policy allows wildcards)
 * still never reaches a denied resource or API group, a verb the policy does not allow, or a
 * workload write the policy does not allow.
 */
export function policyRefusal(
  attributes: RequestAttributes,
  owner: string,
  policy: SharingPolicyConfig = sharingPolicy(),
): string | null {
  if (attributes.kind !== "resource" || !policyDenies(policy, attributes)) return null;
  return `forbidden: what tenant "${owner}" shares with you does not include ${attributes.verb} ${resourceKey(attributes)} (the operators' sharing policy does not allow it)`;
}

/** Whether `user` would be acting in `tenant` as a grantee (not a member, not an operator). */
export function actsAsGrantee(user: Pick<SessionUser, "role" | "tenant">, tenant: string): boolean {
  return !isOperator(user) && user.tenant !== tenant;
}

/** The attributes of a namespaced request on pods (or one of their subresources). */
export function podAttributes(
  verb: string,
  namespace: string,
  name = "",
  subresource = "",
): Extract<RequestAttributes, { kind: "resource" }> {
  return {
    kind: "resource",
    verb,
    apiGroup: "",
    apiVersion: "v1",
    namespace,
    resource: "pods",
    subresource,
    name,
  };
}

/**
 * Ends `revoke` as soon as the grants stop allowing `attributes` for `user` in `owner` (revoked,
 * expired, edited, deleted). Returns the function that stops watching.
 */
export function revokeWhenUngranted(
  user: GranteeUser,
  owner: string,
  attributes: RequestAttributes,
  revoke: () => void,
): () => void {
  return watchGrantedAccess(
    (grants, now) => verdictOf(grantsInForce(grants, owner, user, now), attributes, owner).kind === "allowed",
    revoke,
  );
}

/** A grantee's request, decided: no grant at all (not found), outside every grant, or allowed. */
export type GranteeVerdict =
  | { kind: "no-grant" }
  | { kind: "outside"; message: string }
  | { kind: "allowed"; grant: string | null };

export async function granteeVerdict(
  user: GranteeUser,
  owner: string,
  attributes: RequestAttributes,
  grants?: readonly SharingPolicyResource[],
): Promise<GranteeVerdict> {
  return verdictOf(grantsInForce(grants ?? (await allGrants()), owner, user, new Date()), attributes, owner);
}

/** The verdict from the grants in force: the grants' rules, then the policy on the request itself. */
function verdictOf(
  live: readonly SharingPolicyResource[],
  attributes: RequestAttributes,
  owner: string,
): GranteeVerdict {
  if (live.length === 0) return { kind: "no-grant" };
  const decision = authorizeByGrants(live, attributes, owner);
  if (!decision.allowed) return { kind: "outside", message: decision.message };
  const refusal = policyRefusal(attributes, owner);
  return refusal ? { kind: "outside", message: refusal } : { kind: "allowed", grant: decision.grant };
}

/**
 * The one decision on a grantee's request, for every door (kube gateway, tRPC, browser streams);
 * each door only maps it to its protocol. No grant at all is `notFound` (the owner might as well not
 * exist), outside the grants `forbidden` with what was asked, grants that cannot be read
 * `unavailable` (the same for every tenant name: nothing of the owner is told). An allowed request
 * on a resource is recorded as a use of the grant.
 */
export type GranteeDecision =
  | { kind: "allow"; grant: string | null }
  | { kind: "notFound"; message: string }
  | { kind: "forbidden"; message: string }
  | { kind: "unavailable"; message: string; cause: unknown };

export async function decideGranteeAccess(
  user: GranteeUser & Pick<SessionUser, "id" | "name" | "tenant">,
  owner: string,
  attributes: RequestAttributes,
  via: GrantUse["via"],
  sharing: {
    verdict(user: GranteeUser, owner: string, attributes: RequestAttributes): Promise<GranteeVerdict>;
    recordUse(use: GrantUse): void;
  } = { verdict: granteeVerdict, recordUse: (use) => grantUsage().record(use) },
): Promise<GranteeDecision> {
  let verdict: GranteeVerdict;
  try {
    verdict = await sharing.verdict(user, owner, attributes);
  } catch (cause) {
    return {
      kind: "unavailable",
      message: "Ring0 cannot check sharing grants right now; try again shortly.",
      cause,
    };
  }
  if (verdict.kind === "no-grant") return { kind: "notFound", message: `Tenant "${owner}" was not found.` };
  if (verdict.kind === "outside") return { kind: "forbidden", message: verdict.message };
  if (verdict.grant && attributes.kind === "resource") {
    sharing.recordUse({
      user,
      owner,
      grant: verdict.grant,
      verb: attributes.verb,
      resource: resourceKey(attributes),
      namespace: attributes.namespace,
      name: attributes.name || undefined,
      via,
    });
  }
  return { kind: "allow", grant: verdict.grant };
}

/** What the kube gateway needs of sharing, from this process's live grants. */
export function liveSharing() {
  return {
    verdict: (user: GranteeUser, owner: string, attributes: RequestAttributes) =>
      granteeVerdict(user, owner, attributes),
    watch: revokeWhenUngranted,
    recordUse: (use: GrantUse) => grantUsage().record(use),
  };
}
