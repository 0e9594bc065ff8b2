/**
 * A deleted tenant's grants end with it: every SharingPolicy it owns or that names it as a grantee
 * is revoked (kept, for the record), so a new tenant created later under the same name inherits
 * no access, given or received.
 */
import { FIELD_MANAGER } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import { kubeRequest } from "@/server/k8s/transport";
import { type SharingPolicyResource, sharingAnnotations, sharingPath } from "./types";

/** Who revoked a deleted tenant's grants, in the grants' revokedBy annotation. */
export const tenantDeletedRevoker = (tenant: string) => `Ring0 (tenant ${tenant} deleted)`;

/** Whether the grant is `tenant`'s own or grants to it. */
export function grantConcernsTenant(grant: SharingPolicyResource, tenant: string): boolean {
  return grant.spec?.ownerTenant === tenant || (grant.spec?.grantees ?? []).some((g) => g.tenant === tenant);
}

/**
 * Revokes every grant not yet revoked that `tenant` owns or receives (listed from the API server,
 * not the informer, so none is missed); resolves the names revoked. A grant deleted meanwhile is skipped.
 */
export async function revokeGrantsOfDeletedTenant(
  superCluster: ClusterConnection,
  tenant: string,
  now: Date = new Date(),
): Promise<string[]> {
  const list = await kubeRequest<{ items?: SharingPolicyResource[] }>(superCluster, {
    method: "GET",
    path: sharingPath,
    timeoutMs: 15_000,
  });
  const revoked: string[] = [];
  for (const grant of list.items ?? []) {
    if (!grantConcernsTenant(grant, tenant)) continue;
    if (grant.metadata.annotations?.[sharingAnnotations.revokedAt]) continue;
    try {
      await kubeRequest(superCluster, {
        method: "PATCH",
        path: `${sharingPath}/${encodeURIComponent(grant.metadata.name)}`,
        query: { fieldManager: FIELD_MANAGER },
        contentType: "application/merge-patch+json",
        body: {
          metadata: {
            annotations: {
              [sharingAnnotations.revokedAt]: now.toISOString(),
              [sharingAnnotations.revokedBy]: tenantDeletedRevoker(tenant),
            },
          },
        },
        timeoutMs: 15_000,
      });
      revoked.push(grant.metadata.name);
    } catch (error) {
      if (isNotFound(error)) continue;
      throw error;
    }
  }
  return revoked;
}
