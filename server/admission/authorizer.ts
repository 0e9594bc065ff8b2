/**
 * Ring0's authorization webhook in tenant control planes: tenant admins have every named verb in the
 * groups of their own CRDs and APIServices from the moment those exist. RBAC grants the same with
 * the next reconcile (server/tenants/defaults.ts), which leaves a window of up to a minute in which
 * `kubectl apply` of a fresh CRD's objects is refused; the API server asks this webhook only about
 * requests RBAC refused (`--authorization-mode=Node,RBAC,Webhook`), so it never slows what RBAC
 * allows. It only ever allows or has no opinion (never denies), so RBAC stays the floor, and
 * when Ring0 is down the rights simply wait for RBAC.
 *
 * The tenant comes from the API server's client certificate (the webhook server checks it), never
 * from the review.
 */

import { isCustomGroup, tenantAdminVerbs } from "@/server/tenants/defaults";
import { kubeUserName, roleGroup } from "@/server/tenants/kube-identity";

export const AUTHORIZE_PATH = "/authorize";

/** The parts of an authorization.k8s.io/v1 SubjectAccessReview spec Ring0 reads. */
export interface AccessReviewSpec {
  user?: string;
  groups?: string[];
  resourceAttributes?: {
    group?: string;
    resource?: string;
    subresource?: string;
    verb?: string;
    namespace?: string;
    name?: string;
  };
  nonResourceAttributes?: { path?: string; verb?: string };
}

export class BadAccessReview extends Error {}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The spec of a SubjectAccessReview body, or a BadAccessReview saying what is wrong with it. */
export function parseAccessReview(body: unknown): { apiVersion: string; spec: AccessReviewSpec } {
  if (!isRecord(body) || body.kind !== "SubjectAccessReview")
    throw new BadAccessReview("not a SubjectAccessReview");
  if (body.apiVersion !== "authorization.k8s.io/v1" && body.apiVersion !== "authorization.k8s.io/v1beta1") {
    throw new BadAccessReview(`unsupported SubjectAccessReview version ${JSON.stringify(body.apiVersion)}`);
  }
  const spec = body.spec;
  if (!isRecord(spec)) throw new BadAccessReview("the SubjectAccessReview has no spec");
  if (
    spec.groups !== undefined &&
    (!Array.isArray(spec.groups) || spec.groups.some((g) => typeof g !== "string"))
  ) {
    throw new BadAccessReview("the SubjectAccessReview's groups are not a list of strings");
  }
  return { apiVersion: body.apiVersion, spec: spec as AccessReviewSpec };
}

/**
 * Whether the reviewed request is a tenant admin's, in a custom group, with a verb admins have
 * (pure: unit-tested). `admins` are the Tenant's spec.admins (IAM user names), bound as users.
 */
export function allowsCustomGroupAccess(
  tenant: string,
  spec: AccessReviewSpec,
  admins: readonly string[],
): boolean {
  const attributes = spec.resourceAttributes;
  if (!attributes || spec.nonResourceAttributes) return false;
  if (!isCustomGroup(attributes.group ?? "")) return false;
  if (!tenantAdminVerbs.includes(attributes.verb ?? "")) return false;
  if ((spec.groups ?? []).includes(roleGroup(tenant, "admin"))) return true;
  return spec.user !== undefined && admins.some((name) => kubeUserName(tenant, name) === spec.user);
}

/** What the webhook server calls for a review: allowed, or no opinion. */
export type AuthorizationHandler = (tenant: string, spec: AccessReviewSpec) => Promise<boolean>;
