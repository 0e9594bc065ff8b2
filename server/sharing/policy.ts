/**
 * The operators' sharing policy: who may grant, who may receive, the largest rule set a grant may
 * hold, the longest it may last, and whether grants need an operator's approval. Beneath it sits a
 * floor no configuration lowers (RBAC objects, Ring0's own API, control-plane configuration,
 * cluster-scoped resources, minting service-account tokens). `checkGrant` reports every rule a
 * grant breaks, each message naming the rule.
 */

import { tenantNamePattern } from "@/server/core/tenant-name";
import { grantVerbs, type SharingPolicyConfig } from "./policy-schema";
import { resourceKey } from "./request-info";
import { granteeRoleGroups, type SharingSpec } from "./types";

export {
  defaultSharingPolicy,
  parseSharingPolicy,
  type SharingPolicyConfig,
  sharingPolicySchema,
} from "./policy-schema";

/** API groups no grant reaches, whatever the policy: they configure the tenant's control plane or RBAC. */
export const floorApiGroups = [
  "rbac.authorization.k8s.io",
  "ring0.dev",
  "admissionregistration.k8s.io",
  "apiregistration.k8s.io",
  "apiextensions.k8s.io",
  "certificates.k8s.io",
  "authentication.k8s.io",
  "authorization.k8s.io",
  "flowcontrol.apiserver.k8s.io",
  "internal.apiserver.k8s.io",
  "storagemigration.k8s.io",
];

/** Cluster-scoped resources (a grant is namespaced: these could only leak through a wildcard). */
export const clusterScopedResources = [
  "namespaces",
  "nodes",
  "persistentvolumes",
  "componentstatuses",
  "clusterroles",
  "clusterrolebindings",
  "customresourcedefinitions",
  "storageclasses",
  "csidrivers",
  "csinodes",
  "volumeattachments",
  "priorityclasses",
  "runtimeclasses",
  "ingressclasses",
  "certificatesigningrequests",
  "apiservices",
  "mutatingwebhookconfigurations",
  "validatingwebhookconfigurations",
  "validatingadmissionpolicies",
  "validatingadmissionpolicybindings",
];

/**
 * Resources that would hand over more than the grant says: a service account's token acts as it,
 * an ephemeral container runs what the grantee chooses in the owner's pod, and the proxies reach
 * whatever the pod or service listens on (tenant admins themselves hold no pods/proxy).
 */
export const floorResources = [
  "serviceaccounts/token",
  "pods/ephemeralcontainers",
  "pods/proxy",
  "services/proxy",
  "bindings",
  "pods/binding",
  "tokenreviews",
];

/**
 * Resources whose objects are or make pods: writing one chooses what a pod mounts and runs as.
 * Subresources (scale, status, log, exec) are not here: they change no pod template.
 */
export const workloadResources = [
  "pods",
  "replicationcontrollers",
  "podtemplates",
  "deployments",
  "replicasets",
  "statefulsets",
  "daemonsets",
  "jobs",
  "cronjobs",
];

/** The verbs that write a workload's spec. */
export const workloadWriteVerbs = ["create", "update", "patch", "*"];

/**
 * Whether the operator policy refuses `verb` on a resource whatever a grant says: a denied resource
 * or API group, a verb it does not allow, or a workload write it does not allow. The gateway asks
 * it of each request (access.ts `policyRefusal`), the sharing controller of each resource a wildcard
 * rule spells out (rbac.ts `explicitRules`), so the Role never names what the gateway refuses.
 */
export function policyDenies(
  policy: SharingPolicyConfig,
  request: { apiGroup: string; resource: string; subresource: string; verb: string },
): boolean {
  const key = resourceKey(request);
  return (
    policy.deniedResources.includes(key) ||
    policy.deniedResources.includes(request.resource) ||
    policy.deniedApiGroups.includes(request.apiGroup) ||
    !(policy.allowedVerbs as string[]).includes(request.verb) ||
    (!policy.allowWorkloadWrites &&
      workloadWriteVerbs.includes(request.verb) &&
      workloadResources.includes(key))
  );
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export interface GrantViolation {
  /** Where in the spec: `rules[0].resources`. */
  path: string;
  /** The policy setting or floor it breaks: `deniedResources`, `floor:rbac`. */
  rule: string;
  message: string;
}

const listed = (list: readonly string[], name: string) => list.includes("*") || list.includes(name);

/**
 * Everything wrong with a grant under `policy` at `now`, each message naming the rule it breaks.
 * Empty means the grant may be created (or approved) as it is.
 */
export function checkGrant(spec: SharingSpec, policy: SharingPolicyConfig, now: Date): GrantViolation[] {
  const violations: GrantViolation[] = [];
  const add = (path: string, rule: string, message: string) => violations.push({ path, rule, message });
  const owner = spec.ownerTenant;
  if (!tenantNamePattern.test(owner)) add("ownerTenant", "format", `"${owner}" is not a tenant name`);
  if (!listed(policy.grantors, owner)) {
    add(
      "ownerTenant",
      "grantors",
      `tenant "${owner}" may not share: it is not among the operator policy's grantors (grantors)`,
    );
  }
  if (spec.grantees.length === 0) add("grantees", "format", "name at least one grantee");
  const seen = new Set<string>();
  spec.grantees.forEach((grantee, index) => {
    const path = `grantees[${index}]`;
    if (!tenantNamePattern.test(grantee.tenant))
      add(`${path}.tenant`, "format", `"${grantee.tenant}" is not a tenant name`);
    else if (grantee.tenant === owner)
      add(`${path}.tenant`, "floor:self", "a tenant cannot share with itself (floor:self)");
    else if (!listed(policy.grantees, grantee.tenant)) {
      add(
        `${path}.tenant`,
        "grantees",
        `tenant "${grantee.tenant}" may not receive grants under the operator policy (grantees)`,
      );
    }
    if (seen.has(grantee.tenant))
      add(`${path}.tenant`, "format", `tenant "${grantee.tenant}" is named twice`);
    seen.add(grantee.tenant);
    for (const group of grantee.groups ?? []) {
      if (!(granteeRoleGroups as readonly string[]).includes(group)) {
        add(
          `${path}.groups`,
          "format",
          `"${group}" is not a role group; use ${granteeRoleGroups.join(", ")}`,
        );
      }
    }
    for (const user of grantee.users ?? []) {
      if (!/^[^\s:*]{1,253}$/.test(user)) add(`${path}.users`, "format", `"${user}" is not a user name`);
    }
  });
  if (spec.rules.length === 0) add("rules", "format", "name at least one rule");
  spec.rules.forEach((rule, index) => {
    const path = `rules[${index}]`;
    const label = `rule ${index + 1}`;
    // An empty list matches nothing, and RBAC refuses a Role rule without groups, resources or verbs.
    const required = [
      ["namespaces", "namespace"],
      ["apiGroups", 'API group ("" is the core group)'],
      ["resources", "resource"],
      ["verbs", "verb"],
    ] as const;
    for (const [field, what] of required) {
      if (rule[field].length === 0) add(`${path}.${field}`, "format", `${label}: name at least one ${what}`);
    }
    for (const namespace of rule.namespaces) {
      if (namespace === "*") {
        add(
          `${path}.namespaces`,
          "floor:named-namespaces",
          `${label}: name the namespaces; "*" would share every namespace, present and future (floor:named-namespaces)`,
        );
      } else if (!dnsLabel.test(namespace)) {
        add(`${path}.namespaces`, "format", `${label}: "${namespace}" is not a namespace name`);
      }
    }
    for (const group of rule.apiGroups) {
      if (group === "*") {
        if (!policy.allowWildcards)
          add(
            `${path}.apiGroups`,
            "allowWildcards",
            `${label}: "*" API groups are not allowed by the operator policy (allowWildcards)`,
          );
      } else if (floorApiGroups.includes(group)) {
        add(
          `${path}.apiGroups`,
          "floor:control-plane",
          `${label}: API group "${group}" is never shareable (RBAC, Ring0 and control-plane configuration; floor:control-plane)`,
        );
      } else if (policy.deniedApiGroups.includes(group)) {
        add(
          `${path}.apiGroups`,
          "deniedApiGroups",
          `${label}: API group "${group || "core"}" is not shareable under the operator policy (deniedApiGroups)`,
        );
      }
    }
    for (const resource of rule.resources) {
      const base = resource.split("/")[0] ?? resource;
      if (resource === "*" || base === "*") {
        if (!policy.allowWildcards)
          add(
            `${path}.resources`,
            "allowWildcards",
            `${label}: "*" resources are not allowed by the operator policy (allowWildcards)`,
          );
      } else if (clusterScopedResources.includes(base)) {
        add(
          `${path}.resources`,
          "floor:cluster-scoped",
          `${label}: "${resource}" is cluster-scoped; grants cover namespaced resources only (floor:cluster-scoped)`,
        );
      } else if (floorResources.includes(resource)) {
        add(
          `${path}.resources`,
          "floor:identity",
          `${label}: "${resource}" is never shareable (it would hand over more than the grant says; floor:identity)`,
        );
      } else if (policy.deniedResources.includes(resource) || policy.deniedResources.includes(base)) {
        add(
          `${path}.resources`,
          "deniedResources",
          `${label}: "${resource}" is not shareable under the operator policy (deniedResources)`,
        );
      }
    }
    for (const verb of rule.verbs) {
      if (!(grantVerbs as readonly string[]).includes(verb)) {
        add(`${path}.verbs`, "format", `${label}: "${verb}" is not a verb a grant can name`);
      } else if (verb === "*" && !policy.allowWildcards) {
        add(
          `${path}.verbs`,
          "allowWildcards",
          `${label}: "*" verbs are not allowed by the operator policy (allowWildcards)`,
        );
      } else if (verb !== "*" && !(policy.allowedVerbs as string[]).includes(verb)) {
        add(
          `${path}.verbs`,
          "allowedVerbs",
          `${label}: verb "${verb}" is not allowed by the operator policy (allowedVerbs: ${policy.allowedVerbs.join(", ")})`,
        );
      }
    }
    const writes = rule.verbs.filter((verb) => workloadWriteVerbs.includes(verb));
    const workloads = rule.resources.filter(
      (resource) => resource === "*" || workloadResources.includes(resource),
    );
    if (!policy.allowWorkloadWrites && writes.length > 0 && workloads.length > 0) {
      add(
        `${path}.verbs`,
        "allowWorkloadWrites",
        `${label}: ${writes.join(", ")} on ${workloads.join(", ")} would let the grantee run pods with the namespace's Secrets and service accounts; not allowed by the operator policy (allowWorkloadWrites)`,
      );
    }
    for (const name of rule.resourceNames ?? []) {
      if (name === "*" || !name.trim())
        add(`${path}.resourceNames`, "format", `${label}: "${name}" is not a resource name`);
    }
  });
  if (spec.expiresAt) {
    const at = new Date(spec.expiresAt);
    if (Number.isNaN(at.getTime())) add("expiresAt", "format", `"${spec.expiresAt}" is not a date and time`);
    else if (at.getTime() <= now.getTime()) add("expiresAt", "format", "the expiry is in the past");
    else if (
      policy.maxExpiryDays !== null &&
      at.getTime() - now.getTime() > policy.maxExpiryDays * 86_400_000
    ) {
      add(
        "expiresAt",
        "maxExpiryDays",
        `grants may last at most ${policy.maxExpiryDays} days under the operator policy (maxExpiryDays)`,
      );
    }
  } else if (policy.maxExpiryDays !== null) {
    add(
      "expiresAt",
      "maxExpiryDays",
      `set an expiry: grants may last at most ${policy.maxExpiryDays} days under the operator policy (maxExpiryDays)`,
    );
  }
  if (!spec.purpose?.trim()) add("purpose", "format", "say what the access is for (purpose)");
  return violations;
}

/** One message for a refusal: every violation, in spec order. */
export function violationsMessage(violations: readonly GrantViolation[]): string {
  return `The grant breaks the sharing policy: ${violations.map((violation) => violation.message).join("; ")}.`;
}
