/**
 * The check the grantee's pages make before rendering anything of an owner: a live grant of `owner`
 * that includes the user and names `namespace`. Anything else reads as a page that does not exist.
 */
import type { SessionUser } from "@/server/auth/roles";
import { grantsFor } from "@/server/sharing/grants";
import { allGrants } from "@/server/sharing/live";
import type { SharingPolicyResource } from "@/server/sharing/types";
import { coversNamespace } from "./shared-grants";
import { ownerTenant } from "./shared-with-me.schema";

/** The live grants of `owner` for `user` that name `namespace`; null when there are none. */
export async function grantsOfSharedNamespace(
  user: SessionUser,
  owner: string,
  namespace: string,
  now = new Date(),
): Promise<SharingPolicyResource[] | null> {
  if (!ownerTenant.safeParse(owner).success) return null;
  const grants = grantsFor(await allGrants(), owner, user, now).filter((grant) =>
    coversNamespace([grant], namespace),
  );
  return grants.length > 0 ? grants : null;
}
