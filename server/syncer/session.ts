/**
 * What the syncer's parts share: one served tenant's session (its control plane connection and
 * caches), the super cluster's caches, work keys, and small readers of pods.
 */
import type { Clock } from "@/server/controllers/clock";
import type { QuotaHard } from "@/server/core/quota-resources";
import { type KubeObject, readObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import type { Logger } from "@/server/logger";
import { type IsolationPolicy, syncLabels } from "./contracts";
import { withoutRing0OwnedKeys } from "./metadata";
import { policyMarkers, type TenantBoundary } from "./network-policies";
import type { QuotaHoldState } from "./quota-hold";
import type { PlacementPolicy } from "./super-pod-spec";
import { type Json, malformedReason, type SyncedKind, type TenantObject } from "./synced-kinds";
import type { CachedObject, WatchCache } from "./watch-cache";

/** Annotation Ring0 puts on a tenant pod through its binding: the super node it runs on. */
export const boundNodeAnnotation = "ring0.dev/super-node";
export const syncerComponent = "ring0-syncer";

export type Obj = TenantObject & CachedObject;

export type WorkKind = SyncedKind | "node" | "event";
export type PatrolKind = SyncedKind | "vnode";

/** The identities a session keeps fresh: tenant pod UID → its key and when its tokens are due. */
export type IdentityRecords = Map<string, { namespace: string; name: string; refreshAt: number }>;

export interface TenantSession {
  tenant: string;
  conn: ClusterConnection;
  caches: Record<SyncedKind, WatchCache<Obj>>;
  vNodes: WatchCache<Obj>;
  placement: PlacementPolicy;
  /** Where the tenant's API server reaches the vn-agents: its vNodes' Hostname (access.kubeletHost). */
  kubeletHost: string;
  /** The operator's isolation policy at the tenant's Pod Security level (Tenant spec.syncer.podSecurity). */
  isolation: IsolationPolicy;
  synced: boolean;
  unreachable: boolean;
  stopped: boolean;
  /** Tenant namespaces whose super namespace this session has applied. */
  namespaces: Set<string>;
  /** Tenant.spec.quota in nano-units (undefined: no quota, nothing is held back). */
  quota?: QuotaHard;
  /** The quota backstop's bookkeeping (server/syncer/quota-hold.ts). */
  quotaHold: QuotaHoldState;
  /** Tenant namespaces whose default share this session has seen to (once each per session). */
  defaultShares: Set<string>;
  /** Pods' identity secrets below and when their tokens are due (identity-secrets.ts). */
  identities: IdentityRecords;
  /** Every runtime and storage class the tenant may name was copied into its control plane (tenant-classes.ts). */
  classesCopied?: boolean;
}

/** The syncer's view of the super cluster and its settings, for the parts beside the engine. */
export interface SyncContext {
  superCluster: ClusterConnection;
  log: Logger;
  clock: Clock;
  superPods(): WatchCache<Obj> | undefined;
  superNodes(): WatchCache<Obj> | undefined;
  superNamespaces(): WatchCache<Obj> | undefined;
  superEvents(): WatchCache<Obj> | undefined;
  /** The tenant's default namespace share (SyncerOptions.namespaceDefaultShare), if it has one. */
  namespaceDefaultShare?: (tenant: string) => Promise<Record<string, string> | undefined>;
  /**
   * Where NetworkPolicies are the wall between tenants (SyncerOptions.tenantBoundary): how a tenant's
   * pods are confined below; undefined elsewhere.
   */
  boundaryOf(tenant: string): TenantBoundary | undefined;
  /** Ring0's boundary policies below, as watched (with a boundary only). */
  superBoundaries(): WatchCache<Obj> | undefined;
}

export function workKey(kind: WorkKind, namespace: string, name: string): string {
  return `${kind}|${namespace}|${name}`;
}

export function parseWorkKey(key: string): { kind: WorkKind; namespace: string; name: string } {
  const [kind, namespace, name] = key.split("|");
  return { kind: kind as WorkKind, namespace: namespace ?? "", name: name ?? "" };
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function isTerminal(pod: Obj | undefined): boolean {
  const phase = (pod?.status as { phase?: string } | undefined)?.phase;
  return phase === "Succeeded" || phase === "Failed";
}

export function nodeNameOf(pod: Obj | undefined): string | undefined {
  const name = (pod?.spec as { nodeName?: unknown } | undefined)?.nodeName;
  return typeof name === "string" && name ? name : undefined;
}

/** The tenant's pod is bound by Ring0 (to the node the super scheduler chose), not pinned by the tenant. */
export function boundByRing0(pod: Obj): boolean {
  const node = nodeNameOf(pod);
  return node !== undefined && pod.metadata.annotations?.[boundNodeAnnotation] === node;
}

export async function readOrNull<T extends KubeObject>(
  conn: ClusterConnection,
  ref: Parameters<typeof readObject>[1],
): Promise<T | null> {
  try {
    return await readObject<T>(conn, ref);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/**
 * A pod's placement below: the session's, and where NetworkPolicies are the wall between tenants
 * the markers of the tenant policies (as copied below) that select the pod by its labels below.
 */
export function podPlacement(ctx: SyncContext, session: TenantSession, pod: Obj): PlacementPolicy {
  if (!ctx.boundaryOf(session.tenant)) return session.placement;
  const namespace = pod.metadata.namespace ?? "";
  const policies: Json[] = [];
  for (const policy of session.caches.networkpolicy.values()) {
    if (policy.metadata.namespace !== namespace || policy.metadata.deletionTimestamp) continue;
    if (malformedReason("networkpolicy", policy) === null) policies.push(policy as Json);
  }
  // Judged on the labels the copy has below (Ring0's own among them), but the markers themselves.
  const labels = {
    ...withoutRing0OwnedKeys(pod.metadata.labels),
    ...session.placement.podLabels,
    [syncLabels.tenant]: session.tenant,
    [syncLabels.managed]: "true",
  };
  const markers = policyMarkers(labels, policies);
  if (Object.keys(markers).length === 0) return session.placement;
  return { ...session.placement, podLabels: { ...session.placement.podLabels, ...markers } };
}
