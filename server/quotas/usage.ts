/**
 * What objects charge against a tenant quota, computed exactly as Kubernetes 1.36's ResourceQuota
 * evaluators compute `status.used` (pkg/quota/v1/evaluator/core and component-helpers' PodRequests
 * / PodLimits), so Ring0's numbers equal `kubectl describe resourcequota` to the nano:
 *
 * - Pods charge `pods` 1 and their effective requests and limits: the sum over containers and
 *   sidecars (init containers with restartPolicy Always), or the largest init container phase if
 *   that is more; pod-level `spec.resources` (PodLevelResources, on by default since 1.34) replace
 *   the container sum for cpu and memory; `spec.overhead` is added to requests, and to limits that
 *   are set and non-zero. Resized containers (InPlacePodVerticalScaling, GA) charge the larger of
 *   spec and status resources. Finished pods (Succeeded, Failed) and pods past their deletion grace
 *   period charge nothing.
 * - Objects arrive as the API server stored them, after defaulting: a container that sets only
 *   limits has requests equal to them by then, so the spec values are summed as they are.
 * - PersistentVolumeClaims charge 1 and `requests.storage` = the larger of spec.resources.requests
 *   and status.allocatedResources (RecoverVolumeExpansionFailure, GA), rounded up to whole bytes.
 * - Services, ConfigMaps, Secrets and Namespaces charge 1 of their count.
 *
 * The types are structural so that both raw JSON and @kubernetes/client-node objects fit.
 */
import { NANO_PER_UNIT, parseQuantity, roundUpToUnits } from "@/server/core/quantity";
import {
  formatResourceQuantity,
  type QuotaHard,
  type QuotaResource,
  quotaResourceNames,
} from "@/server/core/quota-resources";

/** Amounts per resource in nano-units; a missing resource is zero. */
export type Usage = Partial<Record<QuotaResource, bigint>>;

type ResourceList = Readonly<Record<string, string>> | null | undefined;

interface ResourceRequirements {
  requests?: ResourceList;
  limits?: ResourceList;
}

export interface ContainerLike {
  name: string;
  resources?: ResourceRequirements | null;
  /** "Always" on an init container makes it a sidecar. */
  restartPolicy?: string | null;
}

export interface ContainerStatusLike {
  name: string;
  /** What the runtime reports as applied (after an in-place resize). */
  resources?: ResourceRequirements | null;
  allocatedResources?: ResourceList;
}

export interface PodLike {
  metadata?: {
    deletionTimestamp?: string | Date | null;
    deletionGracePeriodSeconds?: number | null;
  } | null;
  spec?: {
    containers?: readonly ContainerLike[] | null;
    initContainers?: readonly ContainerLike[] | null;
    overhead?: ResourceList;
    /** Pod-level resources (cpu, memory, hugepages-*). */
    resources?: ResourceRequirements | null;
  } | null;
  status?: {
    phase?: string | null;
    containerStatuses?: readonly ContainerStatusLike[] | null;
    initContainerStatuses?: readonly ContainerStatusLike[] | null;
    conditions?: readonly { type: string; reason?: string | null }[] | null;
  } | null;
}

export interface PersistentVolumeClaimLike {
  spec?: { resources?: { requests?: ResourceList } | null } | null;
  status?: { allocatedResources?: ResourceList } | null;
}

export type QuotaKind = "Pod" | "Service" | "PersistentVolumeClaim" | "ConfigMap" | "Secret" | "Namespace";

const ONE = NANO_PER_UNIT;

/** Parsed resource lists: name → nano-units. */
type Amounts = Map<string, bigint>;

function amounts(list: ResourceList): Amounts {
  const result: Amounts = new Map();
  for (const [name, text] of Object.entries(list ?? {})) result.set(name, parseQuantity(text));
  return result;
}

function addInto(target: Amounts, other: Amounts): void {
  for (const [name, value] of other) target.set(name, (target.get(name) ?? 0n) + value);
}

function maxInto(target: Amounts, other: Amounts): void {
  for (const [name, value] of other) {
    const current = target.get(name);
    if (current === undefined || value > current) target.set(name, value);
  }
}

function maxOf(first: Amounts, ...others: Amounts[]): Amounts {
  const result = new Map(first);
  for (const other of others) maxInto(result, other);
  return result;
}

const POD_LEVEL_RESOURCES = new Set(["cpu", "memory"]);
const isPodLevelResource = (name: string) => POD_LEVEL_RESOURCES.has(name) || name.startsWith("hugepages-");
const setsPodLevel = (list: ResourceList) => Object.keys(list ?? {}).some(isPodLevelResource);

function resizeInfeasible(pod: PodLike): boolean {
  const condition = pod.status?.conditions?.find((entry) => entry.type === "PodResizePending");
  return condition?.reason === "Infeasible";
}

type Which = "requests" | "limits";

/**
 * One container's requests or limits as the quota sees them: the spec's, or for a container with
 * reported resources (resized in place) the larger of spec and status — only the status when the
 * resize was found infeasible (component-helpers' determineContainerReqs/Limits).
 */
function containerAmounts(
  pod: PodLike,
  container: ContainerLike,
  status: ContainerStatusLike | undefined,
  which: Which,
): Amounts {
  const spec = amounts(container.resources?.[which]);
  if (!status?.resources) return spec;
  const reported = amounts(status.resources[which]);
  if (which === "requests") {
    const allocated = amounts(status.allocatedResources);
    return resizeInfeasible(pod) ? maxOf(reported, allocated) : maxOf(spec, reported, allocated);
  }
  return resizeInfeasible(pod) ? reported : maxOf(spec, reported);
}

const isSidecar = (container: ContainerLike) => container.restartPolicy === "Always";

/** AggregateContainerRequests / AggregateContainerLimits: containers and sidecars add up; init phases take the max. */
function aggregateContainers(pod: PodLike, which: Which): Amounts {
  const statuses = new Map<string, ContainerStatusLike>();
  for (const status of pod.status?.containerStatuses ?? []) statuses.set(status.name, status);
  for (const status of pod.status?.initContainerStatuses ?? []) statuses.set(status.name, status);

  const total: Amounts = new Map();
  for (const container of pod.spec?.containers ?? []) {
    addInto(total, containerAmounts(pod, container, statuses.get(container.name), which));
  }
  // While init container i runs, the sidecars started before it run too.
  const sidecars: Amounts = new Map();
  const initPeak: Amounts = new Map();
  for (const container of pod.spec?.initContainers ?? []) {
    if (isSidecar(container)) {
      const own = containerAmounts(pod, container, statuses.get(container.name), which);
      addInto(total, own);
      addInto(sidecars, own);
      maxInto(initPeak, sidecars);
    } else {
      const phase = amounts(container.resources?.[which]);
      addInto(phase, sidecars);
      maxInto(initPeak, phase);
    }
  }
  maxInto(total, initPeak);
  return total;
}

/** component-helpers' PodRequests with the options the quota evaluator uses in 1.36. */
export function podRequests(pod: PodLike): Map<string, bigint> {
  const requests = aggregateContainers(pod, "requests");
  const podLevel = pod.spec?.resources?.requests;
  if (setsPodLevel(podLevel)) {
    for (const [name, value] of amounts(podLevel)) if (isPodLevelResource(name)) requests.set(name, value);
  }
  addInto(requests, amounts(pod.spec?.overhead));
  return requests;
}

/** component-helpers' PodLimits with the options the quota evaluator uses in 1.36. */
export function podLimits(pod: PodLike): Map<string, bigint> {
  const limits = aggregateContainers(pod, "limits");
  const podLevel = pod.spec?.resources;
  // Unlike requests, pod-level limits apply when any pod-level resource is set (requests or limits).
  if (setsPodLevel(podLevel?.requests) || setsPodLevel(podLevel?.limits)) {
    for (const [name, value] of amounts(podLevel?.limits))
      if (isPodLevelResource(name)) limits.set(name, value);
  }
  for (const [name, value] of amounts(pod.spec?.overhead)) {
    const limit = limits.get(name);
    if (limit !== undefined && limit !== 0n) limits.set(name, limit + value);
  }
  return limits;
}

/** What a pod charges while it counts (see podCounts): pods 1 and its effective requests and limits. */
export function podUsage(pod: PodLike): Usage {
  const requests = podRequests(pod);
  const limits = podLimits(pod);
  return {
    pods: ONE,
    "requests.cpu": requests.get("cpu") ?? 0n,
    "requests.memory": requests.get("memory") ?? 0n,
    "limits.cpu": limits.get("cpu") ?? 0n,
    "limits.memory": limits.get("memory") ?? 0n,
  };
}

/**
 * Whether a pod charges the quota at `now` (the evaluator's QuotaV1Pod): not once it has finished
 * (Succeeded or Failed), and not once it is past its deletion time plus grace period (a pod stuck
 * terminating on a lost node must not block its replacement).
 */
export function podCounts(pod: PodLike, now: Date): boolean {
  const phase = pod.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") return false;
  const deletion = pod.metadata?.deletionTimestamp;
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  if (deletion != null && grace != null) {
    const deadline = new Date(deletion).getTime() + grace * 1000;
    if (now.getTime() > deadline) return false;
  }
  return true;
}

/** What a PVC charges: 1 claim and the larger of requested and allocated storage, in whole bytes. */
export function persistentVolumeClaimUsage(claim: PersistentVolumeClaimLike): Usage {
  const usage: Usage = { persistentvolumeclaims: ONE };
  const requested = claim.spec?.resources?.requests?.storage;
  if (requested === undefined) return usage;
  let storage = roundUpToUnits(parseQuantity(requested));
  const allocated = claim.status?.allocatedResources?.storage;
  if (allocated !== undefined) {
    const allocatedNano = parseQuantity(allocated);
    if (allocatedNano > storage) storage = roundUpToUnits(allocatedNano);
  }
  usage["requests.storage"] = storage;
  return usage;
}

const COUNTED: Record<Exclude<QuotaKind, "Pod" | "PersistentVolumeClaim">, QuotaResource> = {
  Service: "services",
  ConfigMap: "configmaps",
  Secret: "secrets",
  Namespace: "namespaces",
};

/**
 * What one object charges the quota at `now` (only pods depend on the time). Services charge 1
 * whatever their type; Ring0 quotas do not limit node ports or load balancers.
 */
export function objectUsage(kind: "Pod", object: PodLike, now: Date): Usage;
export function objectUsage(
  kind: "PersistentVolumeClaim",
  object: PersistentVolumeClaimLike,
  now?: Date,
): Usage;
export function objectUsage(kind: QuotaKind, object: unknown, now?: Date): Usage;
export function objectUsage(kind: QuotaKind, object: unknown, now?: Date): Usage {
  switch (kind) {
    case "Pod": {
      if (!now)
        throw new TypeError("objectUsage of a Pod needs the time: finished and expired pods do not count");
      const pod = object as PodLike;
      return podCounts(pod, now) ? podUsage(pod) : {};
    }
    case "PersistentVolumeClaim":
      return persistentVolumeClaimUsage(object as PersistentVolumeClaimLike);
    default:
      return { [COUNTED[kind]]: ONE };
  }
}

export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = { ...a };
  for (const [resource, value] of entries(b)) sum[resource] = (sum[resource] ?? 0n) + value;
  return sum;
}

/** a − b per resource (may go negative: the caller decides what that means). */
export function subtractUsage(a: Usage, b: Usage): Usage {
  const difference: Usage = { ...a };
  for (const [resource, value] of entries(b)) difference[resource] = (difference[resource] ?? 0n) - value;
  return difference;
}

export function sumUsage(list: Iterable<Usage>): Usage {
  let total: Usage = {};
  for (const usage of list) total = addUsage(total, usage);
  return total;
}

/** Whether two usages are equal, a missing resource counting as zero. */
export function usageEquals(a: Usage, b: Usage): boolean {
  return quotaResourceNames.every((resource) => (a[resource] ?? 0n) === (b[resource] ?? 0n));
}

function entries(usage: Usage): [QuotaResource, bigint][] {
  return Object.entries(usage).filter((entry): entry is [QuotaResource, bigint] => entry[1] !== undefined);
}

/** A resource a request would take over its limit. All amounts in nano-units. */
export interface Exceeded {
  resource: QuotaResource;
  /** What the request adds. */
  requested: bigint;
  /** What is in use without it. */
  used: bigint;
  limit: bigint;
}

/**
 * The limits that `delta` (what a create or update adds) would exceed on top of `used`. Only
 * resources the request increases are checked, as Kubernetes does: a request that frees or leaves
 * a resource alone passes even if the tenant is already over on it (e.g. after a lowered limit).
 */
export function checkAgainst(hard: QuotaHard, used: Usage, delta: Usage): Exceeded[] {
  const exceeded: Exceeded[] = [];
  for (const resource of quotaResourceNames) {
    const limit = hard[resource];
    const requested = delta[resource] ?? 0n;
    if (limit === undefined || requested <= 0n) continue;
    const inUse = used[resource] ?? 0n;
    if (inUse + requested > limit) exceeded.push({ resource, requested, used: inUse, limit });
  }
  return exceeded;
}

/**
 * One sentence for the admission response, which kubectl prints verbatim:
 * `exceeded tenant quota of "acme": requests.cpu: requested 500m, used 1800m, limited 2`.
 */
export function refusalMessage(tenant: string, exceeded: readonly Exceeded[]): string {
  const parts = exceeded.map(
    ({ resource, requested, used, limit }) =>
      `${resource}: requested ${formatResourceQuantity(resource, requested)}, used ${formatResourceQuantity(
        resource,
        used,
      )}, limited ${formatResourceQuantity(resource, limit)}`,
  );
  return `exceeded tenant quota of ${JSON.stringify(tenant)}: ${parts.join("; ")}`;
}

/** A resource whose usage is above its limit. */
export interface Overage {
  resource: QuotaResource;
  used: bigint;
  limit: bigint;
  /** used − limit. */
  over: bigint;
}

/** The resources `used` is above `hard` on (a preview before lowering a quota), in display order. */
export function compareHardToUsage(hard: QuotaHard, used: Usage): Overage[] {
  const over: Overage[] = [];
  for (const resource of quotaResourceNames) {
    const limit = hard[resource];
    const inUse = used[resource] ?? 0n;
    if (limit !== undefined && inUse > limit)
      over.push({ resource, used: inUse, limit, over: inUse - limit });
  }
  return over;
}
