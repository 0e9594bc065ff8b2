/**
 * The grantee's side of sharing: the grants in force for a user of every owner (the "Shared with
 * me" page), and the check the grantee's pages make before rendering anything of an owner. Both
 * decide as the gateway and the streams do (live and within the operator policy), so a page never
 * shows a grant that would not work.
 */
import type { SessionUser } from "@/server/core/roles";
import { tenantNameField } from "@/server/core/tenant-name";
import { grantsInForce } from "@/server/sharing/access";
import { coversNamespace, type SharedGrantView, sharedGrantView } from "@/server/sharing/grantee-view";
import { type GranteeUser, ownersSharingWith } from "@/server/sharing/grants";
import { allGrants } from "@/server/sharing/live";
import type { SharingPolicyResource } from "@/server/sharing/types";
import { listTenants } from "@/server/tenants/tenant-resources";

const ownerTenant = tenantNameField();

/** Owners' display names (spec.displayName, else the name): the only thing of an owner a grantee reads. */
async function ownerDisplayNames(owners: ReadonlySet<string>): Promise<Map<string, string>> {
  const tenants = await listTenants();
  const names = new Map<string, string>();
  for (const tenant of tenants) {
    const name = tenant.metadata.name;
    if (owners.has(name)) names.set(name, tenant.spec?.displayName?.trim() || name);
  }
  return names;
}

/** The grants in force for `user`, of every owner (by owner, then name). */
export function grantsSharedWith(
  grants: readonly SharingPolicyResource[],
  user: GranteeUser,
  now: Date,
): SharingPolicyResource[] {
  return ownersSharingWith(grants, user, now).flatMap((owner) =>
    grantsInForce(grants, owner, user, now).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)),
  );
}

/** Every grant in force whose grantees include `user`, as the grantee sees it. */
export async function listSharedWithMe(user: SessionUser, now = new Date()): Promise<SharedGrantView[]> {
  const grants = grantsSharedWith(await allGrants(), user, now);
  if (grants.length === 0) return [];
  const names = await ownerDisplayNames(new Set(grants.map((grant) => grant.spec.ownerTenant)));
  return grants.map((grant) =>
    sharedGrantView(grant, names.get(grant.spec.ownerTenant) ?? grant.spec.ownerTenant),
  );
}

/**
 * The grants of `owner` in force for `user` that name `namespace`; null when there are none, which
 * the grantee's pages answer as a page that does not exist.
 */
export async function grantsOfSharedNamespace(
  user: SessionUser,
  owner: string,
  namespace: string,
  now = new Date(),
): Promise<SharingPolicyResource[] | null> {
  if (!ownerTenant.safeParse(owner).success) return null;
  const grants = grantsInForce(await allGrants(), owner, user, now).filter((grant) =>
    coversNamespace([grant], namespace),
  );
  return grants.length > 0 ? grants : null;
}
