/**
 * A tenant's quota as the webhook enforces it, and the check that tenant admins' per-namespace
 * ResourceQuotas fit inside it.
 */
import { parseQuantity, QuantityError } from "@/server/core/quantity";
import {
  canonicalResourceName,
  formatResourceQuantity,
  type QuotaHard,
  type QuotaResource,
  quotaResourceNames,
  validateHardKeepingGood,
} from "@/server/core/quota-resources";
import type { TenantResource } from "@/server/tenants/tenant-resources";

export type CheckedHard = QuotaHard;

/**
 * `Tenant.spec.quota.hard` in nano-units. Ring0's API validates quotas before writing them; one
 * written with kubectl may still name something Ring0 does not enforce: those entries are left out
 * (and named in `ignored`) rather than disabling the whole quota.
 */
export function tenantHardOf(input: Record<string, string>): { hard: CheckedHard; ignored: string[] } {
  const { hard, errors } = validateHardKeepingGood(input);
  return { hard, ignored: errors.map((error) => error.key) };
}

/** A Tenant's quota as enforced (`tenantHardOf` of its spec.quota.hard; {} without one). */
export function hardOfTenant(tenant: TenantResource | undefined): CheckedHard {
  return tenantHardOf(tenant?.spec?.quota?.hard ?? {}).hard;
}

interface ResourceQuotaLike {
  metadata?: { namespace?: string; name?: string };
  spec?: { hard?: Record<string, string>; scopes?: string[]; scopeSelector?: unknown };
}

/**
 * What each namespace is given, per resource: the smallest `hard` among its unscoped
 * ResourceQuotas (Kubernetes enforces every quota of a namespace, so the tightest one is its
 * share). Scoped quotas (scopes, scopeSelector) cap a subset of pods only and allocate nothing.
 * Entries that are not quantities are skipped (the API server validates ResourceQuotas itself).
 */
export function namespaceShares(quotas: readonly unknown[]): Map<string, Map<QuotaResource, bigint>> {
  const shares = new Map<string, Map<QuotaResource, bigint>>();
  for (const item of quotas) {
    const quota = item as ResourceQuotaLike | null;
    const namespace = quota?.metadata?.namespace;
    if (!namespace || !quota?.spec?.hard) continue;
    if ((quota.spec.scopes?.length ?? 0) > 0 || quota.spec.scopeSelector) continue;
    const share = shares.get(namespace) ?? new Map<QuotaResource, bigint>();
    for (const [key, value] of Object.entries(quota.spec.hard)) {
      const resource = canonicalResourceName(key);
      if (!resource) continue;
      let amount: bigint;
      try {
        amount = parseQuantity(String(value));
      } catch (error) {
        if (error instanceof QuantityError) continue;
        throw error;
      }
      const before = share.get(resource);
      share.set(resource, before === undefined ? amount : before < amount ? before : amount);
    }
    shares.set(namespace, share);
  }
  return shares;
}

/**
 * Undefined when the namespaces' shares fit in the tenant's quota; otherwise one message naming each
 * resource over, the total, the limit and the namespaces it is split across.
 */
export function namespaceShare(hard: CheckedHard, quotas: readonly unknown[]): string | undefined {
  const shares = namespaceShares(quotas);
  const problems: string[] = [];
  for (const resource of quotaResourceNames) {
    const limit = hard[resource];
    if (limit === undefined) continue;
    let total = 0n;
    const parts: string[] = [];
    for (const [namespace, share] of [...shares.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const amount = share.get(resource);
      if (amount === undefined) continue;
      total += amount;
      parts.push(`${namespace} ${formatResourceQuantity(resource, amount)}`);
    }
    if (total > limit) {
      problems.push(
        `${resource}: the namespaces' quotas would add up to ${formatResourceQuantity(resource, total)} (${parts.join(", ")}) but the tenant's quota is ${formatResourceQuantity(resource, limit)}`,
      );
    }
  }
  if (problems.length === 0) return undefined;
  return `namespace quotas exceed the tenant quota: ${problems.join("; ")}; lower a namespace's quota or ask an operator to raise the tenant's`;
}
