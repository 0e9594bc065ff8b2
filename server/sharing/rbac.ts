/**
 * The RBAC a live grant becomes in the owner's control plane: per namespace it covers, a Role with
 * the grant's rules for that namespace and a RoleBinding to the grantee identities the gateway
 * impersonates (server/tenants/kube-identity.ts granteeIdentity). Both carry Ring0's managed labels,
 * so the tenant's protection policy refuses any edit by the tenant's own admins.
 */
import type { KubeObject } from "@/server/k8s/apply";
import { managedLabels } from "@/server/tenants/defaults";
import { kubeUserName, roleGroup, tenantGroup } from "@/server/tenants/kube-identity";
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
  if (!rule.verbs.includes("create") || rule.verbs.includes("get") || rule.verbs.includes("*")) return null;
  const resources = rule.resources.flatMap((resource) => {
    if (resource === "*") return [...connectSubresources].map((subresource) => `*/${subresource}`);
    const subresource = resource.split("/")[1];
    return subresource && connectSubresources.has(subresource) ? [resource] : [];
  });
  return resources.length > 0 ? { resources: [...new Set(resources)], verbs: ["get"] } : null;
}

/** The Roles and RoleBindings of a live grant (pure; the controller applies them). */
export function grantRbacManifests(grant: SharingPolicyResource): KubeObject[] {
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
        const base = {
          apiGroups: rule.apiGroups,
          resources: rule.resources,
          ...(rule.resourceNames?.length ? { resourceNames: rule.resourceNames } : {}),
          verbs: rule.verbs,
        };
        const upgrades = websocketUpgradeRule(rule);
        return upgrades ? [base, { ...base, ...upgrades }] : [base];
      });
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
