/**
 * A grant's Roles and RoleBindings in the owner tenant's control plane: found by their labels,
 * applied (server-side apply, forced) and removed. Only Ring0's protected objects are ever listed,
 * so a tenant's own RBAC is never touched, whatever labels it copies.
 */

import { deleteObject, type KubeObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { namespacedResources } from "@/server/k8s/discovery";
import { isNotFound, K8sError } from "@/server/k8s/errors";
import { RoleBindingKind, RoleKind } from "@/server/k8s/kinds/rbac";
import { kubeRequest } from "@/server/k8s/transport";
import { protectedLabel } from "@/server/tenants/defaults";
import type { SharingPolicyConfig } from "./policy";
import { grantRbacManifests, grantRbacName, hasWildcard } from "./rbac";
import type { RbacOutcome } from "./status";
import { grantLabel, type SharingPolicyResource } from "./types";

const rbacKey = (object: Pick<KubeObject, "kind" | "metadata">) =>
  `${object.kind}/${object.metadata.namespace ?? ""}/${object.metadata.name}`;

/**
 * The grant's objects in the owner's control plane that are not in `desired` (a namespace removed
 * from the grant, or every object of a grant that is no longer live), RoleBindings first: a binding
 * without its Role grants nothing, while a Role left without a binding would be harmless too.
 */
export function staleRbac(desired: readonly KubeObject[], existing: readonly KubeObject[]): KubeObject[] {
  const wanted = new Set(desired.map(rbacKey));
  return existing
    .filter((object) => !wanted.has(rbacKey(object)))
    .sort((a, b) => (a.kind === b.kind ? 0 : a.kind === "RoleBinding" ? -1 : 1));
}

/**
 * The share RBAC in one tenant's control plane, by the grant its label names (the orphan sweep then
 * re-reads each grant: only one that is gone, or that names another owner now, loses its objects).
 */
export function rbacByGrant(objects: readonly KubeObject[]): Map<string, KubeObject[]> {
  const byGrant = new Map<string, KubeObject[]>();
  for (const object of objects) {
    const grant = object.metadata.labels?.[grantLabel];
    if (!grant) continue;
    byGrant.set(grant, [...(byGrant.get(grant) ?? []), object]);
  }
  return byGrant;
}

/** The owner's refusal of one object for good (invalid, forbidden), as opposed to a failure worth a retry. */
export function isRefusal(error: unknown): error is K8sError {
  return error instanceof K8sError && [400, 403, 422].includes(error.status);
}

/** Whether an apply failed because its namespace does not exist in the owner's control plane. */
export function isMissingNamespace(error: unknown): boolean {
  if (!isNotFound(error)) return false;
  const details = (error as K8sError).details;
  return details?.kind === "namespaces" || /namespaces? "[^"]*" not found/.test((error as Error).message);
}

/** A grant name is usable as a label value (grantLabel) only up to 63 characters. */
export function isLabelValue(value: string): boolean {
  return /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(value) && value.length <= 63;
}

const whichObject = (object: KubeObject) =>
  `${object.kind} "${object.metadata.name}" in namespace "${object.metadata.namespace}"`;

/**
 * Ring0's Roles and RoleBindings across the control plane's namespaces matching a label selector.
 * Only protected ones: the tenant's own objects (which cannot carry that label) are never touched,
 * whatever other labels they copy.
 */
export async function labelledRbac(conn: ClusterConnection, labelSelector: string): Promise<KubeObject[]> {
  const query = { labelSelector: `${labelSelector},${protectedLabel}=true` };
  const [roles, bindings] = await Promise.all(
    [RoleKind, RoleBindingKind].map((kind) =>
      kubeRequest<{ items: KubeObject[] }>(conn, {
        path: kind.path(),
        query,
        timeoutMs: 15_000,
      }),
    ),
  );
  return [
    ...(roles?.items ?? []).map((item) => ({
      ...item,
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
    })),
    ...(bindings?.items ?? []).map((item) => ({
      ...item,
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
    })),
  ];
}

/** The grant's Roles and RoleBindings in the owner's control plane, found by their label. */
export async function existingRbac(conn: ClusterConnection, grant: string): Promise<KubeObject[]> {
  if (!isLabelValue(grant)) return []; // Such a grant's objects are refused: none can exist.
  return labelledRbac(conn, `${grantLabel}=${grant}`);
}

export async function removeRbac(conn: ClusterConnection, objects: readonly KubeObject[]): Promise<void> {
  for (const object of objects) {
    await deleteObject(conn, {
      apiVersion: object.apiVersion,
      kind: object.kind,
      metadata: { name: object.metadata.name, namespace: object.metadata.namespace },
    });
  }
}

/** Removes every Role and RoleBinding of the grant from the owner's control plane. */
export async function removeGrantRbac(conn: ClusterConnection, grant: string): Promise<void> {
  await removeRbac(conn, staleRbac([], await existingRbac(conn, grant)));
}

/** Applies a live grant's RBAC and removes what it no longer covers; what came of it, for RBACApplied. */
export async function applyGrantRbac(
  conn: ClusterConnection,
  grant: SharingPolicyResource,
  policy: () => SharingPolicyConfig,
  signal: AbortSignal,
): Promise<RbacOutcome> {
  // Wildcard rules are spelled out against what the owner's control plane serves now.
  const discovered = grant.spec.rules.some(hasWildcard) ? await namespacedResources(conn) : undefined;
  const expansion = discovered && { served: discovered.resources, policy: policy() };
  const desired = grantRbacManifests(grant, expansion);
  const missing = new Set<string>();
  const refused: string[] = [];
  for (const manifest of desired) {
    signal.throwIfAborted();
    const namespace = manifest.metadata.namespace ?? "";
    if (missing.has(namespace)) continue;
    try {
      await serverSideApply(conn, manifest, { force: true });
    } catch (error) {
      if (isMissingNamespace(error)) {
        missing.add(namespace);
      } else if (isRefusal(error)) {
        refused.push(`${whichObject(manifest)}: ${error.message}`);
        // An older version of the refused object would keep rights the grant no longer gives.
        await deleteObject(conn, manifest);
      } else {
        throw error;
      }
    }
  }
  await removeRbac(conn, staleRbac(desired, await existingRbac(conn, grant.metadata.name)));
  return {
    name: grantRbacName(grant.metadata.name),
    namespaces: [...new Set(desired.map((manifest) => manifest.metadata.namespace ?? ""))],
    missing: [...missing],
    refused,
    undiscovered: discovered?.unavailable ?? [],
  };
}
