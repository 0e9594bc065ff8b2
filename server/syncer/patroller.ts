/**
 * The patroller: compares both sides per tenant and kind (the tenant's caches against its objects
 * listed below by label) and hands every mismatch to the engine, which queues the key; a key the
 * patroller queued that then reconciles successfully counts as a repair. Mismatches: missing
 * below, hash drift, orphans below (tenant object gone or another uid), pod status or binding
 * drift, vNodes missing or left over. Super namespaces of tenants that no longer exist go too.
 */
import { deleteObject } from "@/server/k8s/apply";
import { groupVersionPath } from "@/server/k8s/kinds/kind";
import type { V1Pod } from "@/server/k8s/kinds/node";
import { kubeRequest } from "@/server/k8s/transport";
import { type IsolationPolicy, syncAnnotations, syncLabels } from "./contracts";
import { checkPodIsolation } from "./filter";
import { runningPodPolicy } from "./isolation-policy";
import {
  boundByRing0,
  isTerminal,
  nodeNameOf,
  type Obj,
  type PatrolKind,
  parseWorkKey,
  podPlacement,
  type SyncContext,
  type TenantSession,
  workKey,
} from "./session";
import type { PlacementPolicy } from "./super-pod-spec";
import { isSynced, type Json, kindInfo, malformedReason, type SyncedKind, syncedKinds } from "./synced-kinds";
import { superObject, syncHashOf, withSyncHash, writtenBySyncer } from "./translate";
import { podStatusPatch, serviceStatusPatch } from "./upward-status";
import type { VNodes } from "./vnodes";

export interface PatrolCounts {
  checked: number;
  mismatched: number;
  repaired: number;
}

export interface Patroller {
  patrolTenant(session: TenantSession): Promise<void>;
  /** Super namespaces labelled for a served tenant that is not among `tenants` (once they are known). */
  collectDeletedTenants(tenants: { synced: boolean; has(tenant: string): boolean }): Promise<void>;
}

export interface PatrollerDependencies {
  vNodes: VNodes;
  serves(tenant: string): boolean;
  /** A mismatch: count it and queue `key` for the tenant. */
  flag(tenant: string, kind: PatrolKind, key: string): void;
  count(tenant: string, kind: PatrolKind, field: keyof PatrolCounts, by: number): void;
}

/** Where a kind is listed in the super cluster (all namespaces). */
function superListPath(kind: SyncedKind): string {
  return `${groupVersionPath(kindInfo[kind].apiVersion)}/${kindInfo[kind].resource}`;
}

function tenantSelector(tenant: string): string {
  return `${syncLabels.tenant}=${tenant},${syncLabels.managed}=true`;
}

/**
 * How a tenant pod and its copy below disagree in a way reconciling would change, or null:
 *   missing   no copy below, and the pod may be synced (not terminal, refused or malformed)
 *   evicted   no copy below of a pod Ring0 bound: the tenant must see it Failed
 *   stale     the copy is of an earlier pod of the same name
 *   changed   the copy is not what the pod translates to now
 *   unbound   the copy is scheduled, the tenant's pod not yet bound
 *   status    the tenant's status is not the copy's
 */
export type PodDrift = "missing" | "evicted" | "stale" | "changed" | "unbound" | "status";

export function podDrift(
  pod: Obj,
  copy: Obj | undefined,
  settings: { tenant: string; placement: PlacementPolicy; policy: IsolationPolicy },
): PodDrift | null {
  if (!copy) {
    if (isTerminal(pod)) return null;
    if (boundByRing0(pod)) return "evicted";
    if (checkPodIsolation(pod as unknown as V1Pod, settings.policy).length > 0) return null;
    return malformedReason("pod", pod) === null ? "missing" : null;
  }
  if (copy.metadata.annotations?.[syncAnnotations.uid] !== pod.metadata.uid) return "stale";
  const desired = withSyncHash(superObject(settings.tenant, "pod", pod, settings.placement, settings.policy));
  // A change the filter refuses stays in the tenant: the copy is as it should be.
  const refused = () =>
    checkPodIsolation(pod as unknown as V1Pod, runningPodPolicy(settings.policy)).length > 0;
  if (syncHashOf(copy) !== syncHashOf(desired) && !refused()) return "changed";
  if (nodeNameOf(copy) && !nodeNameOf(pod)) return "unbound";
  return podStatusPatch(pod.status as Json | undefined, copy.status as Json | undefined) === null
    ? null
    : "status";
}

export function createPatroller(ctx: SyncContext, dependencies: PatrollerDependencies): Patroller {
  const { vNodes, serves, flag, count } = dependencies;

  async function listBelow(tenant: string, kind: SyncedKind): Promise<Obj[]> {
    const list = await kubeRequest<{ items: Obj[] }>(ctx.superCluster, {
      path: superListPath(kind),
      query: { labelSelector: tenantSelector(tenant) },
      timeoutMs: 30_000,
    });
    return list.items;
  }

  async function patrolTenant(session: TenantSession): Promise<void> {
    const { tenant } = session;
    for (const kind of syncedKinds) {
      const below = await listBelow(tenant, kind);
      const belowByKey = new Map<string, Obj>();
      for (const object of below) {
        if (!writtenBySyncer(kind, object, tenant)) continue;
        const tenantNamespace = object.metadata.annotations?.[syncAnnotations.namespace] ?? "";
        const tenantName = object.metadata.annotations?.[syncAnnotations.name] ?? object.metadata.name;
        belowByKey.set(
          kind === "namespace" ? workKey(kind, "", tenantName) : workKey(kind, tenantNamespace, tenantName),
          object,
        );
      }
      const keys = new Set<string>(belowByKey.keys());
      const services = (namespace: string) => (name: string) => session.caches.service.get(namespace, name);
      for (const object of session.caches[kind].values()) {
        const namespace = object.metadata.namespace ?? "";
        if (!isSynced(kind, object, services(namespace))) continue;
        const key = workKey(kind, kind === "namespace" ? "" : namespace, object.metadata.name);
        keys.add(key);
        const copy = belowByKey.get(key);
        if (object.metadata.deletionTimestamp) {
          if (copy && !copy.metadata.deletionTimestamp && kind !== "pod") flag(tenant, kind, key);
          continue;
        }
        if (kind === "pod") {
          const placement = {
            tenant,
            placement: podPlacement(ctx, session, object),
            policy: session.isolation,
          };
          if (podDrift(object, copy, placement)) flag(tenant, kind, key);
          continue;
        }
        if (malformedReason(kind, object)) continue;
        const desired = withSyncHash(
          superObject(tenant, kind, object, {}, session.isolation, ctx.boundaryOf(tenant)),
        );
        if (!copy || syncHashOf(copy) !== syncHashOf(desired)) flag(tenant, kind, key);
        else if (
          kind === "service" &&
          serviceStatusPatch(object.status as Json | undefined, copy.status as Json | undefined)
        )
          flag(tenant, kind, key);
      }
      for (const [key, copy] of belowByKey) {
        if (copy.metadata.deletionTimestamp) continue;
        const { namespace, name } = parseWorkKey(key);
        const original =
          kind === "namespace"
            ? session.caches.namespace.get("", name)
            : session.caches[kind].get(namespace, name);
        if (!original || original.metadata.uid !== copy.metadata.annotations?.[syncAnnotations.uid])
          flag(tenant, kind, key);
      }
      count(tenant, kind, "checked", keys.size);
    }
    // vNodes: one per node in use, none elsewhere.
    const inUse = vNodes.nodesInUse(session);
    const present = new Set([...session.vNodes.values()].map((node) => node.metadata.name));
    const all = new Set([...inUse, ...present]);
    for (const node of all) {
      if (inUse.has(node) !== present.has(node) && (present.has(node) || ctx.superNodes()?.get("", node))) {
        flag(tenant, "vnode", workKey("node", "", node));
      }
    }
    count(tenant, "vnode", "checked", all.size);
  }

  /** Super namespaces of tenants that no longer exist (deleted while the syncer was away). */
  async function collectDeletedTenants(tenants: {
    synced: boolean;
    has(tenant: string): boolean;
  }): Promise<void> {
    const superNamespaces = ctx.superNamespaces();
    if (!tenants.synced || !superNamespaces?.isSynced()) return;
    for (const namespace of superNamespaces.values()) {
      const tenant = namespace.metadata.labels?.[syncLabels.tenant];
      if (!tenant || !serves(tenant) || tenants.has(tenant) || namespace.metadata.deletionTimestamp) continue;
      ctx.log.info("removing a synced namespace of a deleted tenant", {
        tenant,
        namespace: namespace.metadata.name,
      });
      await deleteObject(ctx.superCluster, {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: namespace.metadata.name },
      });
    }
  }
  return { patrolTenant, collectDeletedTenants };
}
