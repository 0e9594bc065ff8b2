/**
 * The read side of tenant quotas, gathered for the API: a tenant's limits against its usage (live
 * from its control plane, else the newest sample), one resource's history, and the operator's
 * allocation overview. The arithmetic is pure and unit-tested (usage-view.ts, usage-history.ts,
 * overview.ts); this module only reads the inputs.
 */

import { parseQuantity, QuantityError } from "@/server/core/quantity";
import { type QuotaResource, quotaResourceInfo } from "@/server/core/quota-resources";
import type { PrismaClient } from "@/server/db/client";
import type { Logger } from "@/server/logger";
import { listNodes } from "@/server/nodes/service";
import { listTenants } from "@/server/tenants/tenant-resources";
import {
  type AllocationRow,
  allocationVsCapacity,
  type Capacity,
  type Consumer,
  type TenantOverviewRow,
  tenantOverviewRow,
  topConsumers,
} from "./overview";
import { limitsOf, tenantLimits } from "./tenant-limits";
import { type TenantUsage, tenantUsageOf } from "./tenant-usage";
import type { Usage } from "./usage";
import { downsample, type HistoryPoint, samplePoints } from "./usage-history";
import { createQuotaUsageRepository } from "./usage-repository";
import {
  breakdown,
  type NamespaceRow,
  type ResourceRow,
  resourceRows,
  usageFromSample,
  type WorkloadRow,
} from "./usage-view";

/** What the read side reads with: the request's database and logger. */
export interface UsageReaders {
  db: PrismaClient;
  logger: Logger;
}

export interface TenantQuotaUsage {
  tenant: string;
  hasQuota: boolean;
  ignored: string[];
  /** Where the usage comes from: the control plane now, the newest sample, or nowhere yet. */
  source: "live" | "sample" | "none";
  at: Date | null;
  note: string | null;
  resources: ResourceRow[];
  /** The resources the namespace table shows, in display order. */
  namespaceColumns: QuotaResource[];
  namespaces: NamespaceRow[];
  workloads: WorkloadRow[];
  workloadCount: number;
}

/**
 * A tenant's quota against its usage, read live from its control plane; while the control plane
 * does not answer, the newest sample stands in (without the breakdowns) and the page says so.
 */
export async function tenantQuotaUsage(
  { db, logger }: UsageReaders,
  input: { tenant: string; workloadsBy: "cpu" | "memory"; topWorkloads: number },
): Promise<TenantQuotaUsage> {
  const quota = await tenantLimits(input.tenant);
  let live: TenantUsage | undefined;
  let note: string | null = null;
  try {
    live = await tenantUsageOf(input.tenant);
    if (!live) note = "The tenant's control plane is not serving, so usage cannot be read right now.";
  } catch (error) {
    logger.warn("reading a tenant's quota usage failed", { tenant: input.tenant, error });
    note = "The tenant's control plane did not answer, so usage cannot be read right now.";
  }

  const base = { tenant: input.tenant, hasQuota: quota.hasQuota, ignored: quota.ignored };
  if (live) {
    const resources = resourceRows(quota.hard, live.total);
    const columns = resources.map((row) => row.resource).filter((resource) => resource !== "namespaces");
    return {
      ...base,
      source: "live",
      at: live.at,
      note: null,
      resources,
      namespaceColumns: columns,
      ...breakdown(live, columns, input),
    };
  }
  const sample = await createQuotaUsageRepository(db).latestSample(input.tenant);
  return {
    ...base,
    source: sample ? "sample" : "none",
    at: sample?.at ?? null,
    note: sample ? `${note} Showing the last sample.` : note,
    resources: resourceRows(quota.hard, sample ? usageFromSample(sample.used) : {}),
    namespaceColumns: [],
    namespaces: [],
    workloads: [],
    workloadCount: 0,
  };
}

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
export async function quotaOverview({ db }: Pick<UsageReaders, "db">): Promise<QuotaOverview> {
  const [tenants, nodes, samples] = await Promise.all([
    listTenants(),
    listNodes(),
    createQuotaUsageRepository(db).latestSamples(),
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
    .map((tenant) => ({ tenant: tenant.metadata.name, quota: limitsOf(tenant) }))
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

export interface QuotaHistory {
  resource: QuotaResource;
  label: string;
  kind: "cpu" | "memory" | "count";
  from: Date;
  to: Date;
  /** How many samples the points summarise. */
  samples: number;
  points: HistoryPoint[];
}

export async function quotaHistory(
  { db }: Pick<UsageReaders, "db">,
  input: { tenant: string; resource: QuotaResource; sinceHours: number },
  now = new Date(),
): Promise<QuotaHistory> {
  const from = new Date(now.getTime() - input.sinceHours * 3_600_000);
  const rows = await createQuotaUsageRepository(db).samplesSince(input.tenant, from);
  const info = quotaResourceInfo(input.resource);
  return {
    resource: input.resource,
    label: info.label,
    kind: info.kind,
    from,
    to: now,
    samples: rows.length,
    points: downsample(samplePoints(rows, input.resource)),
  };
}
