/**
 * The check the grantee's pages make before rendering anything of an owner: a grant of `owner` in
 * force for the user (live and within the operator policy: the gateway's own decision) that names
 * `namespace`. Anything else reads as a page that does not exist.
 */
import type { SessionUser } from "@/server/core/roles";
import { grantsInForce } from "@/server/sharing/access";
import { allGrants } from "@/server/sharing/live";
import type { SharingPolicyResource } from "@/server/sharing/types";
import { coversNamespace } from "./shared-grants";
import { ownerTenant } from "./shared-with-me.schema";

/** The grants of `owner` in force for `user` that name `namespace`; null when there are none. */
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
