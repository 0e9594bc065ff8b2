import type { SessionUser } from "@/server/core/roles";
import { readSynced, requireSuperCluster } from "@/server/k8s/live";
import { grantsInForce } from "@/server/sharing/access";
import { type GranteeUser, ownersSharingWith } from "@/server/sharing/grants";
import { allGrants } from "@/server/sharing/live";
import type { SharingPolicyResource } from "@/server/sharing/types";
import { tenantInformer } from "@/server/tenants/tenant-resources";
import { type SharedGrantView, sharedGrantView } from "./shared-grants";

/** Owners' display names (spec.displayName, else the name): the only thing of an owner a grantee reads. */
async function ownerDisplayNames(owners: ReadonlySet<string>): Promise<Map<string, string>> {
  const informer = tenantInformer(requireSuperCluster());
  const tenants = await readSynced([informer], "tenant list", () => informer.snapshot());
  const names = new Map<string, string>();
  for (const tenant of tenants) {
    const name = tenant.metadata.name;
    if (owners.has(name)) names.set(name, tenant.spec?.displayName?.trim() || name);
  }
  return names;
}

/**
 * The grants in force for `user`, of every owner (by owner, then name): each owner's as the gateway
 * and streams decide them (live and within the operator policy), so the page never shows a grant
 * that would not work.
 */
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
