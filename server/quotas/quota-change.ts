/**
 * Pure rules of changing a tenant's quota: the hard limits a request asks for (a template's, with
 * explicit entries over them), which of them current usage is already above, and the preview an
 * operator sees before applying (the resources, namespaces and workloads that would be over).
 */

import {
  formatHard,
  formatResourceQuantity,
  type HardError,
  type QuotaHard,
  type QuotaResource,
  quotaResourceNames,
  validateHard,
} from "@/server/core/quota-resources";
import type { TenantUsage } from "@/server/quotas/tenant-usage";
import { compareHardToUsage, type Overage, type Usage } from "@/server/quotas/usage";

export type DesiredHard = { ok: true; hard: QuotaHard } | { ok: false; errors: string[] };

function messages(errors: readonly HardError[], prefix = ""): string[] {
  return errors.map((error) => `${prefix}${error.message}`);
}

/**
 * The hard limits asked for: the template's limits, then the explicit ones over them (aliases
 * count as the resource they stand for). Every bad entry of both is reported, nothing is kept.
 */
export function desiredHard(
  template: { name: string; hard: Record<string, unknown> } | null,
  explicit: Record<string, unknown> | undefined,
): DesiredHard {
  const errors: string[] = [];
  let base: QuotaHard = {};
  if (template) {
    const checked = validateHard(template.hard);
    if (checked.ok) base = checked.hard;
    else errors.push(...messages(checked.errors, `template "${template.name}": `));
  }
  const checked = validateHard(explicit ?? {});
  if (!checked.ok) errors.push(...messages(checked.errors));
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, hard: { ...base, ...(checked.ok ? checked.hard : {}) } };
}

/** "Invalid quota — pods: '-1' is negative …; unknown resource 'gpus': …" — every problem at once. */
export function invalidQuotaMessage(errors: readonly string[]): string {
  return `Invalid quota — ${errors.join("; ")}. Nothing was changed.`;
}

/** An overage as text: numbers as Kubernetes writes them. */
export interface OverageText {
  resource: QuotaResource;
  used: string;
  limit: string;
}

export function overageText(overage: Pick<Overage, "resource" | "used" | "limit">): OverageText {
  return {
    resource: overage.resource,
    used: formatResourceQuantity(overage.resource, overage.used),
    limit: formatResourceQuantity(overage.resource, overage.limit),
  };
}

export function describeOverage(overage: OverageText): string {
  return `${overage.resource}: used ${overage.used}, limit ${overage.limit}`;
}

/**
 * Which limits of `next` the tenant already uses more than. `refused` are those this change makes
 * (a limit lowered or added below usage): they need the operator's explicit consent. `alreadyOver`
 * are limits left as they were that usage was above before (after an earlier consented change);
 * they do not block an unrelated change.
 */
export function overagesOf(
  current: QuotaHard,
  next: QuotaHard,
  used: Usage,
): { refused: Overage[]; alreadyOver: Overage[] } {
  const refused: Overage[] = [];
  const alreadyOver: Overage[] = [];
  for (const overage of compareHardToUsage(next, used)) {
    (current[overage.resource] === overage.limit ? alreadyOver : refused).push(overage);
  }
  return { refused, alreadyOver };
}

export function belowUsageMessage(tenant: string, refused: readonly Overage[]): string {
  const parts = refused.map((overage) => describeOverage(overageText(overage)));
  return `Tenant "${tenant}" already uses more than the new quota allows — ${parts.join(
    "; ",
  )}. Raise those limits, free the resources first, or apply anyway with allowBelowUsage (the CLI's --allow-below-usage): new requests are then refused until usage drops below the limits.`;
}

export interface QuotaPreview {
  /** The limits as they would be written. */
  hard: Record<string, string>;
  /** When usage was read; null when the tenant's control plane could not be read. */
  usageAt: Date | null;
  used: Record<string, string> | null;
  /** Resources the tenant as a whole would be over, with who uses them most. */
  over: Array<
    OverageText & {
      namespaces: Array<{ namespace: string; used: string }>;
      workloads: Array<{ namespace: string; kind: string; name: string; pods: number; used: string }>;
    }
  >;
  /** Resources whose namespaces' ResourceQuota shares would add up to more than the new limit. */
  shares: Array<{
    resource: QuotaResource;
    limit: string;
    total: string;
    namespaces: Array<{ namespace: string; share: string }>;
  }>;
  /** Namespaces whose usage alone is above a new limit. */
  namespacesOver: Array<{ namespace: string; resource: QuotaResource; used: string; limit: string }>;
}

/** How many namespaces and workloads the preview names per resource over. */
export const PREVIEW_TOP = 5;

const byAmount = (resource: QuotaResource) => (a: { used: Usage }, b: { used: Usage }) => {
  const difference = (b.used[resource] ?? 0n) - (a.used[resource] ?? 0n);
  return difference > 0n ? 1 : difference < 0n ? -1 : 0;
};

/** What `hard` would mean for a tenant using `usage` (null: unknown, nothing can be said). */
export function previewQuota(hard: QuotaHard, usage: TenantUsage | null): QuotaPreview {
  const preview: QuotaPreview = {
    hard: formatHard(hard),
    usageAt: usage?.at ?? null,
    used: usage ? formatHard(usage.total) : null,
    over: [],
    shares: [],
    namespacesOver: [],
  };
  if (!usage) return preview;
  const amount = (resource: QuotaResource, nano: bigint) => formatResourceQuantity(resource, nano);
  for (const overage of compareHardToUsage(hard, usage.total)) {
    const { resource } = overage;
    const users = <T extends { used: Usage }>(list: readonly T[]) =>
      list
        .filter((entry) => (entry.used[resource] ?? 0n) > 0n)
        .sort(byAmount(resource))
        .slice(0, PREVIEW_TOP);
    preview.over.push({
      ...overageText(overage),
      namespaces: users(usage.namespaces).map((entry) => ({
        namespace: entry.namespace,
        used: amount(resource, entry.used[resource] ?? 0n),
      })),
      workloads: users(usage.workloads).map((entry) => ({
        namespace: entry.namespace,
        kind: entry.kind,
        name: entry.name,
        pods: entry.pods,
        used: amount(resource, entry.used[resource] ?? 0n),
      })),
    });
  }
  for (const resource of quotaResourceNames) {
    const limit = hard[resource];
    if (limit === undefined) continue;
    const sharing = usage.namespaces.filter((entry) => entry.shares[resource] !== undefined);
    const total = sharing.reduce((sum, entry) => sum + (entry.shares[resource] ?? 0n), 0n);
    if (total > limit) {
      preview.shares.push({
        resource,
        limit: amount(resource, limit),
        total: amount(resource, total),
        namespaces: sharing.map((entry) => ({
          namespace: entry.namespace,
          share: amount(resource, entry.shares[resource] ?? 0n),
        })),
      });
    }
    for (const entry of usage.namespaces) {
      const used = entry.used[resource] ?? 0n;
      if (used > limit) {
        preview.namespacesOver.push({
          namespace: entry.namespace,
          resource,
          used: amount(resource, used),
          limit: amount(resource, limit),
        });
      }
    }
  }
  return preview;
}
