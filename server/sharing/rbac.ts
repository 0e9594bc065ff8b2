/**
 * The RBAC a live grant becomes in the owner's control plane: per namespace it covers, a Role with
 * the grant's rules for that namespace and a RoleBinding to the grantee identities the gateway
 * impersonates (server/tenants/kube-identity.ts granteeIdentity). Both carry Ring0's managed labels,
 * so the tenant's protection policy refuses any edit by the tenant's own admins.
 */
import type { KubeObject } from "@/server/k8s/apply";
import type { NamespacedResource } from "@/server/k8s/discovery";
import { managedLabels } from "@/server/tenants/defaults";
import { kubeUserName, roleGroup, tenantGroup } from "@/server/tenants/kube-identity";
import { beneathFloor, matches, resourceMatches } from "./grants";
import { policyDenies, type SharingPolicyConfig } from "./policy";
import { connectSubresources } from "./request-info";
import { type GrantRule, grantLabel, ownerLabel, type SharingPolicyResource } from "./types";

const roleGroupOf = { admins: "admin", members: "member", viewers: "viewer" } as const;

/** The Role and RoleBinding name of a grant in each namespace. */
export function grantRbacName(grant: string): string {
  return `ring0:share:${grant}`;
}

/** The RBAC subjects of a grant's grantees. */
export function grantSubjects(grant: SharingPolicyResource): object[] {
  const subjects: object[] = [];
  const group = (name: string) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name });
  const user = (name: string) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "User", name });
  for (const grantee of grant.spec.grantees) {
    const users = grantee.users ?? [];
    const groups = grantee.groups ?? [];
    if (users.length === 0 && groups.length === 0) subjects.push(group(tenantGroup(grantee.tenant)));
    for (const name of [...new Set(users)].sort()) subjects.push(user(kubeUserName(grantee.tenant, name)));
    for (const name of [...new Set(groups)].sort()) {
      const role = roleGroupOf[name as keyof typeof roleGroupOf];
      if (role) subjects.push(group(roleGroup(grantee.tenant, role)));
    }
  }
  return subjects;
}

/**
 * The API server authorises a WebSocket exec, attach or port-forward (a GET with an upgrade, what
 * kubectl sends) as `get` on the subresource and then `create` too; the gateway decides them as
 * `create`. A rule granting `create` on those subresources therefore also needs `get` on exactly
 * them in the Role, or kubectl's exec through the gateway is refused by the owner's API server. A
 * `get` on them without an upgrade opens nothing, and the gateway refuses it anyway.
 */
function websocketUpgradeRule(rule: GrantRule): { resources: string[]; verbs: string[] } | null {
  // Wildcard rules arrive here spelled out (explicitRules): no "*" in verbs or resources.
  if (!rule.verbs.includes("create") || rule.verbs.includes("get")) return null;
  const resources = rule.resources.flatMap((resource) => {
    const subresource = resource.split("/")[1];
    return subresource && connectSubresources.has(subresource) ? [resource] : [];
  });
  return resources.length > 0 ? { resources: [...new Set(resources)], verbs: ["get"] } : null;
}

/** Whether a rule names "*" anywhere RBAC would read it as "everything". */
export function hasWildcard(rule: GrantRule): boolean {
  return (
    rule.apiGroups.includes("*") ||
    rule.verbs.includes("*") ||
    rule.resources.some((resource) => resource === "*" || resource.startsWith("*/"))
  );
}

type RoleRule = { apiGroups: string[]; resources: string[]; verbs: string[] };

/**
 * A wildcard rule (allowed when the operator policy allows wildcards) spelled out for RBAC. In a
 * Role, "*" reaches everything, subresources included: Secrets, RBAC, `serviceaccounts/token`,
 * `pods/exec`. The gateway holds the floor and the policy at every request, but the Role is the
 * second wall, so it names exactly what the gateway would let through: each served namespaced
 * resource the rule matches, above the floor, outside the denied groups and resources, with the
 * policy's verbs ("*" becomes `allowedVerbs`) and no workload writes unless the policy allows them.
 * Resources a control plane starts serving later (a new CRD) join at the next reconcile.
 */
export function explicitRules(
  rule: GrantRule,
  served: readonly NamespacedResource[],
  policy: SharingPolicyConfig,
): RoleRule[] {
  const candidates = (rule.verbs.includes("*") ? policy.allowedVerbs : rule.verbs).filter(
    (verb) => verb !== "*",
  );
  const byGroupAndVerbs = new Map<string, RoleRule>();
  for (const { apiGroup, resource: key } of served) {
    const [resource = key, subresource = ""] = key.split("/");
    const attributes = { apiGroup, resource, subresource };
    if (beneathFloor(attributes) || !matches(rule.apiGroups, apiGroup)) continue;
    if (!resourceMatches(rule.resources, attributes)) continue;
    const allowed = candidates.filter((verb) => !policyDenies(policy, { ...attributes, verb }));
    if (allowed.length === 0) continue;
    const id = `${apiGroup}\u0000${allowed.join(",")}`;
    const entry = byGroupAndVerbs.get(id) ?? { apiGroups: [apiGroup], resources: [], verbs: allowed };
    entry.resources.push(key);
    byGroupAndVerbs.set(id, entry);
  }
  return [...byGroupAndVerbs.values()]
    .map((entry) => ({ ...entry, resources: [...new Set(entry.resources)].sort() }))
    .sort((a, b) => `${a.apiGroups[0]}:${a.verbs}`.localeCompare(`${b.apiGroups[0]}:${b.verbs}`));
}

/**
 * What a grant with wildcard rules needs to become RBAC: the owner's served resources and the
 * policy in force. Without it, wildcard rules give no RBAC at all (never "*").
 */
export interface WildcardExpansion {
  served: readonly NamespacedResource[];
  policy: SharingPolicyConfig;
}

/** The Roles and RoleBindings of a live grant (pure; the controller applies them). */
export function grantRbacManifests(
  grant: SharingPolicyResource,
  expansion?: WildcardExpansion,
): KubeObject[] {
  const name = grantRbacName(grant.metadata.name);
  const labels = {
    ...managedLabels,
    [grantLabel]: grant.metadata.name,
    [ownerLabel]: grant.spec.ownerTenant,
  };
  const namespaces = [...new Set(grant.spec.rules.flatMap((rule) => rule.namespaces))]
    .filter((namespace) => namespace !== "*")
    .sort();
  const subjects = grantSubjects(grant);
  const out: KubeObject[] = [];
  for (const namespace of namespaces) {
    const rules = grant.spec.rules
      .filter((rule) => rule.namespaces.includes(namespace))
      .flatMap((rule) => {
        const names = rule.resourceNames?.length ? { resourceNames: rule.resourceNames } : {};
        const spelled: RoleRule[] = hasWildcard(rule)
          ? expansion
            ? explicitRules(rule, expansion.served, expansion.policy)
            : []
          : [{ apiGroups: rule.apiGroups, resources: rule.resources, verbs: rule.verbs }];
        return spelled.flatMap((explicit) => {
          const base = { ...explicit, ...names };
          const upgrades = websocketUpgradeRule({ ...rule, ...explicit });
          return upgrades ? [base, { ...base, ...upgrades }] : [base];
        });
      });
    // A Role without rules still names the namespace; RBAC takes it and it grants nothing.
    const annotations = { "ring0.dev/purpose": grant.spec.purpose.slice(0, 1024) };
    out.push({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace, labels, annotations },
      rules,
    });
    out.push({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name, namespace, labels, annotations },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects,
    });
  }
  return out;
}
