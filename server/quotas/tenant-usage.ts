/**
 * What a tenant uses, read fresh from its control plane (as Ring0): the total the quota is checked
 * against, and the breakdowns the portal and the quota preview show — per namespace (with the
 * namespace's ResourceQuota share) and per workload (pods grouped by their controlling owner).
 * Counted exactly as the webhook's ledger and Kubernetes' ResourceQuota count.
 */
import { namespaceShares } from "@/server/admission/hard";
import type { QuotaResource } from "@/server/core/quota-resources";
import type { ClusterConnection } from "@/server/k8s/cluster";
import {
  ConfigMapKind,
  PersistentVolumeClaimKind,
  ResourceQuotaKind,
  SecretKind,
  ServiceKind,
} from "@/server/k8s/kinds/core";
import { NamespaceKind } from "@/server/k8s/kinds/namespace";
import { PodKind } from "@/server/k8s/kinds/pod";
import { kubeRequest } from "@/server/k8s/transport";
import { createConnectionCache } from "@/server/tenants/connections";
import { getControlPlaneDirectory } from "@/server/tenants/control-planes";
import {
  addUsage,
  objectUsage,
  type PodLike,
  podCounts,
  podUsage,
  type QuotaKind,
  type Usage,
} from "./usage";

export interface NamespaceUsage {
  namespace: string;
  used: Usage;
  /** The namespace's share: the tightest unscoped ResourceQuota per resource (absent: none). */
  shares: Partial<Record<QuotaResource, bigint>>;
}

export interface WorkloadUsage {
  namespace: string;
  /** The pods' controlling owner (e.g. ReplicaSet, StatefulSet, Job), or "Pod" for bare pods. */
  kind: string;
  name: string;
  pods: number;
  used: Usage;
}

export interface TenantUsage {
  at: Date;
  total: Usage;
  namespaces: NamespaceUsage[];
  workloads: WorkloadUsage[];
}

interface Listed {
  metadata?: {
    name?: string;
    namespace?: string;
    ownerReferences?: Array<{ kind?: string; name?: string; controller?: boolean }>;
  };
}

const COUNTED: Array<{ kind: Exclude<QuotaKind, "Pod" | "Namespace">; path: string }> = [
  { kind: "Service", path: ServiceKind.path() },
  { kind: "PersistentVolumeClaim", path: PersistentVolumeClaimKind.path() },
  { kind: "ConfigMap", path: ConfigMapKind.path() },
  { kind: "Secret", path: SecretKind.path() },
];

async function list(conn: ClusterConnection, path: string): Promise<Listed[]> {
  const result = await kubeRequest<{ items?: Listed[] }>(conn, { path, timeoutMs: 30_000 });
  return result.items ?? [];
}

/** Pure: the breakdown of already-listed objects (unit-tested). */
export function tenantUsageFrom(
  objects: {
    pods: unknown[];
    namespaces: unknown[];
    resourceQuotas: unknown[];
    others: Array<{ kind: Exclude<QuotaKind, "Pod" | "Namespace">; items: unknown[] }>;
  },
  now: Date,
): TenantUsage {
  const byNamespace = new Map<string, Usage>();
  const workloads = new Map<string, WorkloadUsage>();
  const charge = (namespace: string | undefined, usage: Usage) => {
    if (!namespace) return;
    byNamespace.set(namespace, addUsage(byNamespace.get(namespace) ?? {}, usage));
  };
  let total: Usage = {};
  for (const item of objects.pods) {
    const pod = item as PodLike & Listed;
    if (!podCounts(pod, now)) continue;
    const usage = podUsage(pod);
    total = addUsage(total, usage);
    const namespace = pod.metadata?.namespace ?? "";
    charge(namespace, usage);
    const owner = pod.metadata?.ownerReferences?.find((reference) => reference.controller);
    const kind = owner?.kind ?? "Pod";
    const name = owner?.name ?? pod.metadata?.name ?? "";
    const key = `${namespace}/${kind}/${name}`;
    const workload = workloads.get(key) ?? { namespace, kind, name, pods: 0, used: {} };
    workload.pods += 1;
    workload.used = addUsage(workload.used, usage);
    workloads.set(key, workload);
  }
  for (const { kind, items } of objects.others) {
    for (const item of items) {
      const usage = objectUsage(kind, item);
      total = addUsage(total, usage);
      charge((item as Listed).metadata?.namespace, usage);
    }
  }
  for (const item of objects.namespaces) {
    total = addUsage(total, objectUsage("Namespace", item));
    const name = (item as Listed).metadata?.name;
    if (name && !byNamespace.has(name)) byNamespace.set(name, {});
  }
  const shares = namespaceShares(objects.resourceQuotas);
  return {
    at: now,
    total,
    namespaces: [...byNamespace.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([namespace, used]) => ({
        namespace,
        used,
        shares: Object.fromEntries(shares.get(namespace) ?? new Map()) as Partial<
          Record<QuotaResource, bigint>
        >,
      })),
    workloads: [...workloads.values()].sort(
      (a, b) =>
        Number((b.used["requests.cpu"] ?? 0n) - (a.used["requests.cpu"] ?? 0n)) ||
        Number((b.used["requests.memory"] ?? 0n) - (a.used["requests.memory"] ?? 0n)) ||
        b.pods - a.pods,
    ),
  };
}

/** The tenant's usage, listed fresh from its control plane with `conn` (admin). */
export async function readTenantUsage(conn: ClusterConnection, now = new Date()): Promise<TenantUsage> {
  const [pods, namespaces, resourceQuotas, ...others] = await Promise.all([
    list(conn, PodKind.path()),
    list(conn, NamespaceKind.path()),
    list(conn, ResourceQuotaKind.path()),
    ...COUNTED.map((counted) => list(conn, counted.path)),
  ]);
  return tenantUsageFrom(
    {
      pods,
      namespaces,
      resourceQuotas,
      others: COUNTED.map((counted, index) => ({ kind: counted.kind, items: others[index] ?? [] })),
    },
    now,
  );
}

const connections = createConnectionCache();

/** The tenant's usage through the control plane directory; undefined while its control plane does not serve. */
export async function tenantUsageOf(tenant: string, now = new Date()): Promise<TenantUsage | undefined> {
  const directory = getControlPlaneDirectory();
  if (!directory) return undefined;
  const lookup = await directory.lookup(tenant);
  if (lookup.state !== "ready") return undefined;
  return readTenantUsage(connections.connectionFor(tenant, lookup.access), now);
}
