/**
 * The operator's view of quotas: what tenants are promised (the sum of their hard limits) against
 * what the super cluster can give (its schedulable nodes' allocatable), and who uses the most.
 * Pure, so the arithmetic is unit-tested; usage-service.ts gathers the inputs.
 */
import { type QuantityKind, quantityToNumber } from "@/server/core/quantity";
import {
  formatResourceQuantity,
  type QuotaHard,
  type QuotaResource,
  quotaResourceInfo,
} from "@/server/core/quota-resources";
import type { Usage } from "@/server/quotas/usage";
import { type ResourceRow, resourceRows } from "./usage-view";

/** Node allocatable in nano-units. */
export interface Capacity {
  cpu: bigint;
  memory: bigint;
  pods: bigint;
}

/** The quota resources that node capacity can back, and which allocatable backs each. */
export const ALLOCATED_RESOURCES: readonly { resource: QuotaResource; capacity: keyof Capacity }[] = [
  { resource: "requests.cpu", capacity: "cpu" },
  { resource: "limits.cpu", capacity: "cpu" },
  { resource: "requests.memory", capacity: "memory" },
  { resource: "limits.memory", capacity: "memory" },
  { resource: "pods", capacity: "pods" },
];

export interface AllocationRow {
  resource: QuotaResource;
  label: string;
  kind: QuantityKind;
  /** The sum of the limits of the tenants that set one. */
  allocated: string;
  capacity: string;
  allocatedValue: number;
  capacityValue: number;
  /** allocated ÷ capacity (1.5: promised 150% of what exists); null without capacity. */
  overcommit: number | null;
  tenantsLimited: number;
  /** Tenants without this limit: bounded only by the cluster. */
  tenantsUnlimited: number;
}

/** Allocation vs capacity for each resource nodes back. */
export function allocationVsCapacity(hards: readonly QuotaHard[], capacity: Capacity): AllocationRow[] {
  return ALLOCATED_RESOURCES.map(({ resource, capacity: backing }) => {
    let allocated = 0n;
    let limited = 0;
    for (const hard of hards) {
      const limit = hard[resource];
      if (limit === undefined) continue;
      allocated += limit;
      limited++;
    }
    const total = capacity[backing];
    return {
      resource,
      label: quotaResourceInfo(resource).label,
      kind: quotaResourceInfo(resource).kind,
      allocated: formatResourceQuantity(resource, allocated),
      capacity: formatResourceQuantity(resource, total),
      allocatedValue: quantityToNumber(allocated),
      capacityValue: quantityToNumber(total),
      overcommit: total === 0n ? null : Number((allocated * 1000n) / total) / 1000,
      tenantsLimited: limited,
      tenantsUnlimited: hards.length - limited,
    };
  });
}

export interface TenantOverviewRow {
  tenant: string;
  hasQuota: boolean;
  /** When usage was sampled; null: never. */
  sampledAt: Date | null;
  resources: ResourceRow[];
}

export interface Consumer {
  tenant: string;
  used: string;
  usedValue: number;
  /** Share of the cluster's capacity, in percent; null without capacity. */
  ofCapacity: number | null;
}

/** The `count` tenants using the most of `resource` (ties by name), zero users left out. */
export function topConsumers(
  usages: readonly { tenant: string; used: Usage }[],
  resource: QuotaResource,
  capacity: bigint,
  count = 5,
): Consumer[] {
  return usages
    .filter((entry) => (entry.used[resource] ?? 0n) > 0n)
    .sort((a, b) => {
      const difference = (b.used[resource] ?? 0n) - (a.used[resource] ?? 0n);
      return difference === 0n ? a.tenant.localeCompare(b.tenant) : difference > 0n ? 1 : -1;
    })
    .slice(0, count)
    .map((entry) => {
      const used = entry.used[resource] ?? 0n;
      return {
        tenant: entry.tenant,
        used: formatResourceQuantity(resource, used),
        usedValue: quantityToNumber(used),
        ofCapacity: capacity === 0n ? null : Number((used * 10_000n) / capacity) / 100,
      };
    });
}

export function tenantOverviewRow(
  tenant: string,
  quota: { hasQuota: boolean; hard: QuotaHard },
  sample: { at: Date; used: Usage } | undefined,
): TenantOverviewRow {
  return {
    tenant,
    hasQuota: quota.hasQuota,
    sampledAt: sample?.at ?? null,
    resources: resourceRows(quota.hard, sample?.used ?? {}),
  };
}
