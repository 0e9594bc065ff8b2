/**
 * Pure presentation of quota usage: exact quantity strings (as `kubectl describe resourcequota`
 * prints them) next to plain numbers for bars and charts, and the percentage of a limit in use.
 */
import {
  NANO_PER_UNIT,
  parseQuantity,
  QuantityError,
  type QuantityKind,
  quantityToNumber,
} from "@/server/core/quantity";
import {
  canonicalResourceName,
  formatResourceQuantity,
  type QuotaHard,
  type QuotaResource,
  quotaResourceInfo,
  quotaResourceNames,
} from "@/server/core/quota-resources";
import type { TenantUsage } from "@/server/quotas/tenant-usage";
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

/** A sample's `used` map (resource → quantity) as a Usage; unreadable entries are skipped. */
export function usageFromSample(used: unknown): Usage {
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
): { namespaces: NamespaceRow[]; workloads: WorkloadRow[]; workloadCount: number } {
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
