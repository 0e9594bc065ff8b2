/**
 * Who a Ring0 user is inside a tenant control plane. The kube gateway impersonates these names
 * (after stripping anything the client sent), and the tenant defaults bind RBAC to these groups, so
 * a role change in Ring0 takes effect on the very next request.
 */
import type { Ring0Role } from "@/server/core/roles";

/** `<tenant>:<user>`; the embedded IAM's subjects already have that form. */
export function kubeUserName(tenant: string, subject: string): string {
  return subject.startsWith(`${tenant}:`) ? subject : `${tenant}:${subject}`;
}

/** Every Ring0 user acting in the tenant's control plane carries this group. */
export function tenantGroup(tenant: string): string {
  return `ring0:tenant:${tenant}`;
}

export const kubeRoleGroups = {
  admin: "admins",
  member: "members",
  viewer: "viewers",
} as const;
export type KubeRole = keyof typeof kubeRoleGroups;

export function roleGroup(tenant: string, role: KubeRole): string {
  return `${tenantGroup(tenant)}:${kubeRoleGroups[role]}`;
}

/** Operators act as the tenant's admins (and are recognisable as operators in audit logs). */
export const operatorsGroup = "ring0:operators";

export function kubeRoleFor(role: Ring0Role): KubeRole {
  if (role === "operator" || role === "tenant-admin") return "admin";
  if (role === "tenant-member") return "member";
  return "viewer";
}

/** The groups to impersonate for a user of `role` in `tenant`. */
export function kubeGroupsFor(tenant: string, role: Ring0Role): string[] {
  const groups = [tenantGroup(tenant), roleGroup(tenant, kubeRoleFor(role))];
  if (role === "operator") groups.push(operatorsGroup);
  return groups;
}

/** Every user acting in another tenant's control plane through a sharing grant carries this group. */
export const granteesGroup = "ring0:grantees";

/**
 * Who a user of another tenant is inside an owner's control plane, acting under a sharing grant:
 * their own name and groups from their home tenant (what the grant's RoleBindings name), plus
 * `ring0:grantees`. Never the owner's groups, so none of the owner's own RBAC applies to them.
 */
export function granteeIdentity(user: { tenant: string; subject: string; role: Ring0Role }): {
  user: string;
  groups: string[];
} {
  return {
    user: kubeUserName(user.tenant, user.subject),
    groups: [granteesGroup, tenantGroup(user.tenant), roleGroup(user.tenant, kubeRoleFor(user.role))],
  };
}
