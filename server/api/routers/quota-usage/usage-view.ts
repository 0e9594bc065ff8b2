/**
 * Pure presentation of quota usage: exact quantity strings (as `kubectl describe resourcequota`
 * prints them) next to plain numbers for bars and charts, and the percentage of a limit in use.
 */
import { NANO_PER_UNIT, type QuantityKind, quantityToNumber } from "@/server/core/quantity";
import {
  formatResourceQuantity,
  type QuotaHard,
  type QuotaResource,
  quotaResourceInfo,
  quotaResourceNames,
} from "@/server/core/quota-resources";
import type { Usage } from "@/server/quotas/usage";

/**
 * How much of `limit` is used, in percent rounded down to two decimals (so 99.999% never shows as
 * 100%); null without a limit. A limit of 0 is full from the start: 100% when nothing is used.
 */
export function percentOfLimit(used: bigint, limit: bigint | undefined): number | null {
  if (limit === undefined) return null;
  if (limit === 0n) return used > 0n ? Number.POSITIVE_INFINITY : 100;
  return Number((used * 10_000n) / limit) / 100;
}

export interface ResourceRow {
  resource: QuotaResource;
  label: string;
  kind: QuantityKind;
  /** The limit as Kubernetes prints it; null when the quota does not limit this resource. */
  limit: string | null;
  used: string;
  /** The same amounts in units (cores, bytes, objects) for bars and charts. */
  limitValue: number | null;
  usedValue: number;
  percent: number | null;
  over: boolean;
}

/**
 * One row per resource worth showing, in display order: every limited resource, and (so that a
 * tenant without a limit on something still sees what it uses) every resource in use.
 */
export function resourceRows(hard: QuotaHard, used: Usage): ResourceRow[] {
  return quotaResourceNames
    .filter((resource) => hard[resource] !== undefined || (used[resource] ?? 0n) > 0n)
    .map((resource) => {
      const info = quotaResourceInfo(resource);
      const limit = hard[resource];
      const inUse = used[resource] ?? 0n;
      return {
        resource,
        label: info.label,
        kind: info.kind,
        limit: limit === undefined ? null : formatResourceQuantity(resource, limit),
        used: formatResourceQuantity(resource, inUse),
        limitValue: limit === undefined ? null : quantityToNumber(limit),
        usedValue: quantityToNumber(inUse),
        percent: percentOfLimit(inUse, limit),
        over: limit !== undefined && inUse > limit,
      };
    });
}

/** Usage as quantity strings per resource (zero resources left out). */
export function formatUsage(
  used: Partial<Record<QuotaResource, bigint>>,
): Partial<Record<QuotaResource, string>> {
  const text: Partial<Record<QuotaResource, string>> = {};
  for (const resource of quotaResourceNames) {
    const amount = used[resource];
    if (amount !== undefined) text[resource] = formatResourceQuantity(resource, amount);
  }
  return text;
}

/** Whole objects as a number (a count quantity in nano-units → 3). */
export function countOf(nano: bigint | undefined): number {
  return Number((nano ?? 0n) / NANO_PER_UNIT);
}
