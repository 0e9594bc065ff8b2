/**
 * Live grants, and what they allow (pure: the gateway, tRPC, streams and the controller all decide
 * from these functions, so every path agrees). A grant is live when it is approved for its current
 * spec, not revoked and not expired — computed from the object and the clock, so expiry takes
 * effect at its instant everywhere, without waiting for any controller.
 */
import { createHash } from "node:crypto";
import type { Ring0Role } from "@/server/core/roles";
import { kubeRoleFor, kubeRoleGroups } from "@/server/tenants/kube-identity";
import { clusterScopedResources, floorApiGroups, floorResources } from "./policy";
import { type RequestAttributes, resourceKey } from "./request-info";
import {
  type GrantRule,
  type GrantState,
  type SharingPolicyResource,
  type SharingSpec,
  sharingAnnotations,
} from "./types";

/** Deterministic JSON (sorted keys) of a value. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** What an approval is bound to: any change of the spec (who, what, until when) needs a new one. */
export function specHash(spec: SharingSpec): string {
  return `sha256:${createHash("sha256").update(canonical(spec)).digest("hex")}`;
}

export interface GrantStateDecision {
  state: GrantState;
  reason: string;
  message: string;
}

export function expiryOf(grant: SharingPolicyResource): Date | null {
  if (!grant.spec.expiresAt) return null;
  const at = new Date(grant.spec.expiresAt);
  return Number.isNaN(at.getTime()) ? new Date(0) : at;
}

/** Revoked, then expired, then approved for this spec: the state the status reports. */
export function grantState(grant: SharingPolicyResource, now: Date): GrantStateDecision {
  const annotations = grant.metadata.annotations ?? {};
  if (annotations[sharingAnnotations.revokedAt]) {
    const by = annotations[sharingAnnotations.revokedBy] ?? "someone";
    return {
      state: "Revoked",
      reason: "Revoked",
      message: `Revoked by ${by} at ${annotations[sharingAnnotations.revokedAt]}.`,
    };
  }
  const expiry = expiryOf(grant);
  if (expiry && expiry.getTime() <= now.getTime()) {
    return { state: "Expired", reason: "Expired", message: `Expired at ${expiry.toISOString()}.` };
  }
  if (grant.metadata.deletionTimestamp) {
    return { state: "Revoked", reason: "Deleting", message: "The grant is being deleted." };
  }
  if (annotations[sharingAnnotations.approvedSpec] !== specHash(grant.spec)) {
    return {
      state: "PendingApproval",
      reason: annotations[sharingAnnotations.approvedSpec] ? "ChangedSinceApproval" : "AwaitingApproval",
      message: annotations[sharingAnnotations.approvedSpec]
        ? "The grant changed since it was approved; an operator must approve it again."
        : "Waiting for an operator to approve the grant.",
    };
  }
  const by = annotations[sharingAnnotations.approvedBy] ?? "Ring0";
  return { state: "Active", reason: "Approved", message: `Approved by ${by}.` };
}

export function isLive(grant: SharingPolicyResource, now: Date): boolean {
  return (
    grantState(grant, now).state === "Active" &&
    grant.spec.grantees.every((g) => g.tenant !== grant.spec.ownerTenant)
  );
}

/** The user a grant can match: their home tenant, IAM subject and Ring0 role. */
export interface GranteeUser {
  tenant: string;
  subject: string;
  role: Ring0Role;
}

/** The user's name inside their tenant: the subject without a `<tenant>:` prefix. */
export function granteeUserName(user: Pick<GranteeUser, "tenant" | "subject">): string {
  return user.subject.startsWith(`${user.tenant}:`)
    ? user.subject.slice(user.tenant.length + 1)
    : user.subject;
}

/** Whether the grant's grantees include the user (operators are never grantees: they reach all). */
export function granteeMatches(spec: SharingSpec, user: GranteeUser): boolean {
  if (user.role === "operator" || user.tenant === spec.ownerTenant) return false;
  const name = granteeUserName(user);
  const roleGroup = kubeRoleGroups[kubeRoleFor(user.role)];
  return spec.grantees.some((grantee) => {
    if (grantee.tenant !== user.tenant) return false;
    const users = grantee.users ?? [];
    const groups = grantee.groups ?? [];
    if (users.length === 0 && groups.length === 0) return true;
    return users.includes(name) || users.includes(user.subject) || groups.includes(roleGroup);
  });
}

/** The live grants of `owner` that include `user`. */
export function grantsFor(
  grants: readonly SharingPolicyResource[],
  owner: string,
  user: GranteeUser,
  now: Date,
): SharingPolicyResource[] {
  return grants.filter(
    (grant) => grant.spec.ownerTenant === owner && granteeMatches(grant.spec, user) && isLive(grant, now),
  );
}

/** Owners that share something with `user` right now. */
export function ownersSharingWith(
  grants: readonly SharingPolicyResource[],
  user: GranteeUser,
  now: Date,
): string[] {
  const owners = new Set<string>();
  for (const grant of grants) {
    if (granteeMatches(grant.spec, user) && isLive(grant, now)) owners.add(grant.spec.ownerTenant);
  }
  return [...owners].sort();
}

export const matches = (list: readonly string[] | undefined, value: string) =>
  (list ?? []).includes("*") || (list ?? []).includes(value);

/** RBAC's resource matching: "*", the exact `resource/subresource`, or `*\/<subresource>`. */
export function resourceMatches(
  resources: readonly string[],
  attributes: { resource: string; subresource: string },
) {
  return (
    matches(resources, resourceKey(attributes)) ||
    (attributes.subresource !== "" && resources.includes(`*/${attributes.subresource}`))
  );
}

/**
 * The policy's floor, held at every decision: what a wildcard rule (allowed by the operator policy)
 * would otherwise reach. The namespace object and every other cluster-scoped resource, RBAC, Ring0's
 * and the control plane's configuration, and the resources that mint identities.
 */
export function beneathFloor(attributes: {
  apiGroup: string;
  resource: string;
  subresource: string;
}): boolean {
  return (
    floorApiGroups.includes(attributes.apiGroup) ||
    clusterScopedResources.includes(attributes.resource) ||
    floorResources.includes(resourceKey(attributes)) ||
    floorResources.includes(attributes.resource)
  );
}

/** Whether one rule covers a namespaced resource request (RBAC's own matching, above the floor). */
export function ruleCovers(
  rule: GrantRule,
  attributes: Extract<RequestAttributes, { kind: "resource" }>,
): boolean {
  if (!attributes.namespace || !rule.namespaces.includes(attributes.namespace)) return false;
  if (beneathFloor(attributes)) return false;
  if (!matches(rule.apiGroups, attributes.apiGroup)) return false;
  if (!resourceMatches(rule.resources, attributes)) return false;
  if (!matches(rule.verbs, attributes.verb)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (attributes.name !== "" && names.includes(attributes.name));
}

/** Discovery a grantee's kubectl needs before its first real request (read-only, no objects). */
export function isDiscovery(attributes: Extract<RequestAttributes, { kind: "non-resource" }>): boolean {
  if (attributes.verb !== "get") return false;
  const path = attributes.path;
  return (
    path === "/api" ||
    path === "/apis" ||
    /^\/api\/[^/]+$/.test(path) ||
    /^\/apis\/[^/]+(\/[^/]+)?$/.test(path) ||
    path === "/version" ||
    path === "/openapi/v2" ||
    path === "/openapi/v3" ||
    /^\/openapi\/v3\/apis?(\/[^/]+){0,2}$/.test(path)
  );
}

export type GrantDecision = { allowed: true; grant: string | null } | { allowed: false; message: string };

/**
 * Whether `grants` (the live grants of one owner for one user) allow a request. The message of a
 * refusal says what was asked and that no grant covers it; it names no other grant.
 */
export function authorizeByGrants(
  grants: readonly SharingPolicyResource[],
  attributes: RequestAttributes,
  owner: string,
): GrantDecision {
  if (grants.length === 0) return { allowed: false, message: `tenant "${owner}" not found` };
  if (attributes.kind === "invalid")
    return { allowed: false, message: `invalid request: ${attributes.reason}` };
  if (attributes.kind === "non-resource") {
    if (isDiscovery(attributes)) return { allowed: true, grant: null };
    return {
      allowed: false,
      message: `forbidden: what tenant "${owner}" shares with you does not include ${attributes.verb} ${attributes.path}`,
    };
  }
  for (const grant of grants) {
    if (grant.spec.rules.some((rule) => ruleCovers(rule, attributes))) {
      return { allowed: true, grant: grant.metadata.name };
    }
  }
  const what = `${attributes.verb} ${resourceKey(attributes)}${attributes.apiGroup ? `.${attributes.apiGroup}` : ""}${
    attributes.name ? ` "${attributes.name}"` : ""
  }`;
  const where = attributes.namespace ? `in namespace "${attributes.namespace}"` : "at cluster scope";
  return {
    allowed: false,
    message: `forbidden: what tenant "${owner}" shares with you does not include ${what} ${where}`,
  };
}

/** The namespaces a set of grants reaches (for the grantee's views). */
export function sharedNamespaces(grants: readonly SharingPolicyResource[]): string[] {
  const namespaces = new Set<string>();
  for (const grant of grants)
    for (const rule of grant.spec.rules) for (const ns of rule.namespaces) namespaces.add(ns);
  return [...namespaces].sort();
}
