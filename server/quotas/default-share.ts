/**
 * A tenant's default namespace share (issue 7: "new namespaces get a default share the tenant admin
 * chooses, never a silent zero"): the hard limits a new namespace's `default-share` ResourceQuota
 * gets when the namespace has none. Validation and the fit check are pure; ensureDefaultShare
 * writes the ResourceQuota into a tenant control plane.
 *
 * The ResourceQuota is not protected: it is the tenant admin's to edit or delete afterwards.
 */

import {
  formatHard,
  formatResourceQuantity,
  type QuotaHard,
  type QuotaResource,
  quotaResourceNames,
  validateHard,
  validateHardKeepingGood,
} from "@/server/core/quota-resources";
import { createObject, type KubeObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isAlreadyExists } from "@/server/k8s/errors";
import { ResourceQuotaKind } from "@/server/k8s/kinds/core";

export const DEFAULT_SHARE_QUOTA_NAME = "default-share";
export const defaultShareLabel = "ring0.dev/default-share";

/** Everything a namespace's ResourceQuota can share out: the tenant quota's resources but `namespaces`. */
export const namespaceShareResources: readonly QuotaResource[] = quotaResourceNames.filter(
  (resource) => resource !== "namespaces",
);

/**
 * How long after its creation a namespace still counts as new. The syncer handles a namespace once
 * per session, and every session starts by reconciling all of them: without this, a restart of
 * Ring0 would give old namespaces a quota they never had, or bring back a `default-share` the tenant
 * admin deleted. A namespace created while Ring0 was away for longer is bounded by the tenant quota.
 */
export const NEW_NAMESPACE_WINDOW_MS = 5 * 60_000;

export type DefaultShareResult = { ok: true; hard: QuotaHard } | { ok: false; errors: string[] };

/**
 * A default share as given, checked all at once: quantities and resource names as for a tenant quota
 * (aliases accepted), no `namespaces` (a namespace cannot hold namespaces), and nothing above the
 * tenant quota's limit for that resource (a share bigger than the whole could never fit).
 */
export function validateDefaultShare(
  input: Record<string, unknown>,
  tenantHard: QuotaHard,
): DefaultShareResult {
  // The entries that are quantities of known resources are checked further even when others are bad.
  const checked = validateHardKeepingGood(input);
  const errors = checked.errors.map((error) => error.message);
  const { hard } = checked;
  for (const [resource, amount] of Object.entries(hard) as [QuotaResource, bigint][]) {
    if (!namespaceShareResources.includes(resource)) {
      errors.push(
        `${resource}: a namespace's quota cannot limit it; a default share may give ${namespaceShareResources.join(", ")}`,
      );
      continue;
    }
    const limit = tenantHard[resource];
    if (limit !== undefined && amount > limit) {
      errors.push(
        `${resource}: ${formatResourceQuantity(resource, amount)} is more than the tenant's quota of ${formatResourceQuantity(resource, limit)}`,
      );
    }
  }
  if (Object.keys(input).length === 0)
    errors.push("give at least one limit (to remove the default share, clear it)");
  return errors.length > 0 ? { ok: false, errors } : { ok: true, hard };
}

/** "Invalid default share — …; … . Nothing was changed." */
export function invalidDefaultShareMessage(errors: readonly string[]): string {
  return `Invalid default share — ${errors.join("; ")}. Nothing was changed.`;
}

/**
 * Undefined when a new namespace's default share fits in what the namespaces' shares leave of the
 * tenant quota; otherwise why not, naming the shares already given (kubectl prints it verbatim).
 */
export function defaultShareMisfit(
  share: QuotaHard,
  tenantHard: QuotaHard,
  shares: ReadonlyMap<string, ReadonlyMap<QuotaResource, bigint>>,
): string | undefined {
  const misfits: { resource: QuotaResource; detail: string }[] = [];
  const namespaces = [...shares.keys()].sort();
  for (const resource of quotaResourceNames) {
    const amount = share[resource];
    const limit = tenantHard[resource];
    if (amount === undefined || limit === undefined) continue;
    let given = 0n;
    const parts: string[] = [];
    for (const namespace of namespaces) {
      const part = shares.get(namespace)?.get(resource);
      if (part === undefined) continue;
      given += part;
      parts.push(`${namespace} ${formatResourceQuantity(resource, part)}`);
    }
    if (given + amount <= limit) continue;
    const format = (value: bigint) => formatResourceQuantity(resource, value);
    misfits.push({
      resource,
      detail: `the namespaces' quotas already give ${format(given)} of the tenant's ${format(limit)}${
        parts.length > 0 ? ` (${parts.join(", ")})` : ""
      }`,
    });
  }
  if (misfits.length === 0) return undefined;
  const named = misfits.map(
    ({ resource }) => `${resource} ${formatResourceQuantity(resource, share[resource]!)}`,
  );
  const details =
    misfits.length === 1
      ? misfits[0]!.detail
      : misfits.map(({ resource, detail }) => `${resource}: ${detail}`).join("; ");
  return `the default share for new namespaces (${named.join(", ")}) does not fit: ${details}; lower the default share or a namespace's quota`;
}

/** The namespace was created recently enough to get the default share (see NEW_NAMESPACE_WINDOW_MS). */
export function isNewNamespace(creationTimestamp: string | Date | undefined, nowMs: number): boolean {
  if (!creationTimestamp) return false;
  const created = new Date(creationTimestamp).getTime();
  return Number.isFinite(created) && nowMs - created <= NEW_NAMESPACE_WINDOW_MS;
}

/** The `default-share` ResourceQuota of a namespace (pure: unit-tested). */
export function defaultShareQuota(namespace: string, hard: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: {
      name: DEFAULT_SHARE_QUOTA_NAME,
      namespace,
      labels: { "app.kubernetes.io/managed-by": "ring0", [defaultShareLabel]: "true" },
      annotations: {
        "ring0.dev/description":
          "The tenant's default share for new namespaces, set by Ring0 when the namespace was created. Yours to change or delete.",
      },
    },
    spec: { hard: formatHard(validShare(hard)) },
  };
}

/** Stored shares were validated when set; anything odd is left out rather than written. */
function validShare(hard: Record<string, string>): QuotaHard {
  const kept: QuotaHard = {};
  for (const [key, value] of Object.entries(hard)) {
    const checked = validateHard({ [key]: value });
    if (!checked.ok) continue;
    for (const [resource, amount] of Object.entries(checked.hard) as [QuotaResource, bigint][]) {
      if (namespaceShareResources.includes(resource)) kept[resource] = amount;
    }
  }
  return kept;
}

/**
 * Gives a namespace its tenant's default share unless it has a ResourceQuota already (any: the
 * tenant admin's own quota wins). Resolves whether it created one; an AlreadyExists (another Ring0
 * got there first) is no error.
 */
export async function ensureDefaultShare(
  conn: ClusterConnection,
  namespace: string,
  hard: Record<string, string>,
): Promise<boolean> {
  const manifest = defaultShareQuota(namespace, hard);
  if (Object.keys((manifest.spec as { hard: object }).hard).length === 0) return false;
  const existing = await ResourceQuotaKind.list(conn, { namespace, timeoutMs: 15_000 });
  if (existing.length > 0) return false;
  try {
    await createObject(conn, manifest);
    return true;
  } catch (error) {
    if (isAlreadyExists(error)) return false;
    throw error;
  }
}
