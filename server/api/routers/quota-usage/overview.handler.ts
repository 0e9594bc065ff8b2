import type { Context } from "@/server/api/trpc";
import { parseQuantity, QuantityError } from "@/server/core/quantity";
import { listNodes } from "@/server/nodes/service";
import type { Usage } from "@/server/quotas/usage";
import {
  type AllocationRow,
  allocationVsCapacity,
  type Capacity,
  type Consumer,
  type TenantOverviewRow,
  tenantOverviewRow,
  topConsumers,
} from "./overview";
import { createQuotaUsageRepository } from "./repository";
import { usageFromSample } from "./tenant.handler";
import { quotaOf, tenantResources } from "./tenant-quota";

export interface QuotaOverview {
  /** Nodes whose allocatable counts (schedulable ones) and all nodes. */
  nodes: { schedulable: number; total: number };
  allocation: AllocationRow[];
  tenants: TenantOverviewRow[];
  top: { cpu: Consumer[]; memory: Consumer[] };
}

function nano(text: string): bigint {
  try {
    return parseQuantity(text);
  } catch (error) {
    if (error instanceof QuantityError) return 0n;
    throw error;
  }
}

/** Every tenant's quota and latest sampled usage against the super cluster's schedulable nodes. */
export async function quotaOverview(ctx: Context): Promise<QuotaOverview> {
  const [tenants, nodes, samples] = await Promise.all([
    tenantResources(),
    listNodes(),
    createQuotaUsageRepository(ctx.db).latestSamples(),
  ]);
  const schedulable = nodes.filter((node) => !node.unschedulable);
  const capacity: Capacity = { cpu: 0n, memory: 0n, pods: 0n };
  for (const node of schedulable) {
    capacity.cpu += nano(node.allocatable.cpu);
    capacity.memory += nano(node.allocatable.memory);
    capacity.pods += nano(node.allocatable.pods);
  }
  const sampled = new Map<string, { at: Date; used: Usage }>(
    samples.map((sample) => [sample.tenant, { at: sample.at, used: usageFromSample(sample.used) }]),
  );
  const quotas = tenants
    .map((tenant) => ({ tenant: tenant.metadata.name, quota: quotaOf(tenant) }))
    .sort((a, b) => a.tenant.localeCompare(b.tenant));
  const usages = quotas.map(({ tenant }) => ({ tenant, used: sampled.get(tenant)?.used ?? {} }));
  return {
    nodes: { schedulable: schedulable.length, total: nodes.length },
    allocation: allocationVsCapacity(
      quotas.map(({ quota }) => quota.hard),
      capacity,
    ),
    tenants: quotas.map(({ tenant, quota }) => tenantOverviewRow(tenant, quota, sampled.get(tenant))),
    top: {
      cpu: topConsumers(usages, "requests.cpu", capacity.cpu),
      memory: topConsumers(usages, "requests.memory", capacity.memory),
    },
  };
}
