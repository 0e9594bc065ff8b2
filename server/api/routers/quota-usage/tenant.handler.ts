import type { Context } from "@/server/api/trpc";
import { parseQuantity, QuantityError, quantityToNumber } from "@/server/core/quantity";
import {
  canonicalResourceName,
  formatResourceQuantity,
  type QuotaResource,
} from "@/server/core/quota-resources";
import { type TenantUsage, tenantUsageOf } from "@/server/quotas/tenant-usage";
import type { Usage } from "@/server/quotas/usage";
import { createQuotaUsageRepository } from "./repository";
import type { TenantUsageInput } from "./schema";
import { tenantQuota } from "./tenant-quota";
import { type ResourceRow, resourceRows } from "./usage-view";

export interface NamespaceRow {
  namespace: string;
  /** Per column resource: what the namespace uses and its ResourceQuota share (null: none). */
  cells: Partial<Record<QuotaResource, { used: string; share: string | null; over: boolean }>>;
}

export interface WorkloadRow {
  namespace: string;
  kind: string;
  name: string;
  pods: number;
  requestsCpu: string;
  requestsMemory: string;
  limitsCpu: string;
  limitsMemory: string;
  /** Units, for sorting and bars. */
  cpuValue: number;
  memoryValue: number;
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

/** A sample's `used` map (resource → quantity) as a Usage; unreadable entries are skipped. */
function usageFromSample(used: unknown): Usage {
  const usage: Usage = {};
  if (!used || typeof used !== "object") return usage;
  for (const [key, text] of Object.entries(used as Record<string, unknown>)) {
    const resource = canonicalResourceName(key);
    if (!resource || typeof text !== "string") continue;
    try {
      usage[resource] = parseQuantity(text);
    } catch (error) {
      if (!(error instanceof QuantityError)) throw error;
    }
  }
  return usage;
}

const amount = (usage: Usage, resource: QuotaResource) =>
  formatResourceQuantity(resource, usage[resource] ?? 0n);

/** Pure: the breakdown tables from a live reading. */
export function breakdown(
  usage: TenantUsage,
  columns: QuotaResource[],
  options: { workloadsBy: "cpu" | "memory"; topWorkloads: number },
): Pick<TenantQuotaUsage, "namespaces" | "workloads" | "workloadCount"> {
  const namespaces = [...usage.namespaces]
    .sort((a, b) => a.namespace.localeCompare(b.namespace))
    .map((entry) => {
      const cells: NamespaceRow["cells"] = {};
      for (const resource of columns) {
        const used = entry.used[resource] ?? 0n;
        const share = entry.shares[resource];
        cells[resource] = {
          used: formatResourceQuantity(resource, used),
          share: share === undefined ? null : formatResourceQuantity(resource, share),
          over: share !== undefined && used > share,
        };
      }
      return { namespace: entry.namespace, cells };
    });
  const key: QuotaResource = options.workloadsBy === "cpu" ? "requests.cpu" : "requests.memory";
  const other: QuotaResource = options.workloadsBy === "cpu" ? "requests.memory" : "requests.cpu";
  const sorted = [...usage.workloads].sort((a, b) => {
    const primary = (b.used[key] ?? 0n) - (a.used[key] ?? 0n);
    if (primary !== 0n) return primary > 0n ? 1 : -1;
    const secondary = (b.used[other] ?? 0n) - (a.used[other] ?? 0n);
    if (secondary !== 0n) return secondary > 0n ? 1 : -1;
    return `${a.namespace}/${a.kind}/${a.name}`.localeCompare(`${b.namespace}/${b.kind}/${b.name}`);
  });
  const workloads = sorted.slice(0, options.topWorkloads).map((workload) => ({
    namespace: workload.namespace,
    kind: workload.kind,
    name: workload.name,
    pods: workload.pods,
    requestsCpu: amount(workload.used, "requests.cpu"),
    requestsMemory: amount(workload.used, "requests.memory"),
    limitsCpu: amount(workload.used, "limits.cpu"),
    limitsMemory: amount(workload.used, "limits.memory"),
    cpuValue: quantityToNumber(workload.used["requests.cpu"] ?? 0n),
    memoryValue: quantityToNumber(workload.used["requests.memory"] ?? 0n),
  }));
  return { namespaces, workloads, workloadCount: usage.workloads.length };
}

/**
 * A tenant's quota against its usage, read live from its control plane; while the control plane
 * does not answer, the newest sample stands in (without the breakdowns) and the page says so.
 */
export async function tenantQuotaUsage(ctx: Context, input: TenantUsageInput): Promise<TenantQuotaUsage> {
  const quota = await tenantQuota(input.tenant);
  let live: TenantUsage | undefined;
  let note: string | null = null;
  try {
    live = await tenantUsageOf(input.tenant);
    if (!live) note = "The tenant's control plane is not serving, so usage cannot be read right now.";
  } catch (error) {
    ctx.logger.warn("reading a tenant's quota usage failed", { tenant: input.tenant, error });
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
  const sample = await createQuotaUsageRepository(ctx.db).latestSample(input.tenant);
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

export { usageFromSample };
