/**
 * SharingPolicy (sharingpolicies.ring0.dev, cluster-scoped): one tenant (the owner) grants users or
 * role groups of other tenants some verbs on some of its namespaced resources. The object in the
 * super cluster is the source of truth; Ring0 writes approval and revocation as annotations (only
 * Ring0 and operators can write in the super cluster) and the controller writes status.
 */

import type { KubeObject } from "@/server/k8s/apply";
import { groupVersionPath } from "@/server/k8s/kinds/group-version";

export const sharingApiVersion = "ring0.dev/v1alpha1";
export const sharingKind = "SharingPolicy";
export const sharingPath = `${groupVersionPath(sharingApiVersion)}/sharingpolicies`;

/** The role groups of a grantee tenant a grant may name (Ring0's roles inside a tenant). */
export const granteeRoleGroups = ["admins", "members", "viewers"] as const;
export type GranteeRoleGroup = (typeof granteeRoleGroups)[number];

export { type GrantVerb, grantVerbs } from "./policy-schema";

export interface Grantee {
  tenant: string;
  /** User names of the grantee tenant (its IAM's user names, as in `<tenant>:<name>` without the prefix). */
  users?: string[];
  /** Role groups of the grantee tenant: admins, members, viewers. */
  groups?: string[];
}

export interface GrantRule {
  namespaces: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

export interface SharingSpec {
  ownerTenant: string;
  grantees: Grantee[];
  rules: GrantRule[];
  expiresAt?: string;
  purpose: string;
}

export type GrantState = "Active" | "PendingApproval" | "Expired" | "Revoked";

export interface SharingCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface SharingStatus {
  state?: GrantState;
  lastUsedAt?: string;
  conditions?: SharingCondition[];
}

export interface SharingPolicyResource extends KubeObject {
  metadata: KubeObject["metadata"] & {
    name: string;
    generation?: number;
    resourceVersion?: string;
    creationTimestamp?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    uid?: string;
  };
  spec: SharingSpec;
  status?: SharingStatus;
}

/** Annotations Ring0 writes on a SharingPolicy. */
export const sharingAnnotations = {
  /** sha256 of the spec an approval is for: an edit of the spec needs approving again. */
  approvedSpec: "ring0.dev/approved-spec",
  approvedBy: "ring0.dev/approved-by",
  approvedAt: "ring0.dev/approved-at",
  revokedBy: "ring0.dev/revoked-by",
  revokedAt: "ring0.dev/revoked-at",
  /** Who created or last edited the grant (a Ring0 user name), shown to reviewers. */
  requestedBy: "ring0.dev/requested-by",
} as const;

/** The label on a grant naming its owner tenant (list a tenant's grants by selector). */
export const ownerLabel = "ring0.dev/owner-tenant";
/** The label Ring0 puts on the RBAC objects it keeps in the owner's control plane for a grant. */
export const grantLabel = "ring0.dev/sharing-policy";
