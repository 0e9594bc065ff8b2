/**
 * The syncer's tenants: the Tenant informer plus the control-plane directory decide, per tenant
 * and one at a time, whether it has a session. A ready tenant gets one (list-watches in its
 * control plane of every synced kind and Ring0's vNodes, each change a key); an unavailable one is
 * paused; a deleted one is dropped and what was synced below collected. A tenant whose prefix an
 * older tenant holds is refused, with an event on its Tenant once. A control plane that stops
 * answering while its Tenant still says Ready pauses only that tenant until /readyz answers again.
 */
import { hardOfTenant } from "@/server/admission/hard";
import type { QuotaHard } from "@/server/core/quota-resources";
import { type ClusterConnection, clusterHealth } from "@/server/k8s/cluster";
import { isUnreachable, type K8sError } from "@/server/k8s/errors";
import { recordEvent } from "@/server/k8s/events";
import { groupVersionPath } from "@/server/k8s/kinds/kind";
import { NodeKind } from "@/server/k8s/kinds/node";
import { createConnectionCache } from "@/server/tenants/connections";
import type { ControlPlaneDirectory } from "@/server/tenants/control-planes";
import { type TenantResource, tenantApiVersion, tenantKind } from "@/server/tenants/tenant-resources";
import type { FairQueue, IsolationPolicy } from "./contracts";
import { tenantIsolationPolicy } from "./isolation-policy";
import { type PrefixRefusal, prefixRefusals } from "./naming";
import type { Patroller } from "./patroller";
import { createQuotaHoldState } from "./quota-hold";
import {
  isTerminal,
  messageOf,
  nodeNameOf,
  type Obj,
  type SyncContext,
  syncerComponent,
  type TenantSession,
  workKey,
} from "./session";
import type { PlacementPolicy } from "./super-pod-spec";
import { type Json, kindInfo, type SyncedKind, syncedKinds } from "./synced-kinds";
import { ensureTenantClasses } from "./tenant-classes";
import { vNodeLabel } from "./vnode-content";
import { createWatchCache, type WatchCache } from "./watch-cache";

export interface TenantSessionOptions {
  context: SyncContext;
  directory: ControlPlaneDirectory;
  /** The operator's isolation policy (each tenant's session holds it at the tenant's level). */
  policy: IsolationPolicy;
  /** Labels every synced pod gets in the super cluster (SyncerOptions.superPodLabels). */
  superPodLabels?: Record<string, string>;
  /** The pods' DNS server (SyncerOptions.podDns), for tenants whose pods reach their API server. */
  podDns?: string;
  serves(tenant: string): boolean;
  /** Whether the syncer runs. */
  running(): boolean;
  /** The current run's fair queue. */
  queue(): FairQueue<string>;
  enqueue(tenant: string, key: string): void;
  /** A tenant that no longer exists: its patrol counts go. */
  forget(tenant: string): void;
  collectDeletedTenants: Patroller["collectDeletedTenants"];
}

export interface TenantSessions {
  /** The served tenants' sessions, by tenant. */
  readonly sessions: ReadonlyMap<string, TenantSession>;
  /** Whether the Tenant list has been read (until then, no tenant counts as deleted). */
  synced(): boolean;
  /** Whether a served Tenant of this name exists. */
  has(tenant: string): boolean;
  /** The served Tenants' names. */
  names(): Iterable<string>;
  /** Whether the tenant is refused for its prefix. */
  isRefused(tenant: string): boolean;
  /** The Tenant informer's list changed. */
  onTenantsChanged(list: TenantResource[]): void;
  /** Look the tenant up again and start, pause or drop its session (serialised per tenant). */
  evaluate(name: string): void;
  /** A request to the tenant's control plane got no answer: pause it if /readyz does not answer either. */
  noticeUnreachable(tenant: string): Promise<void>;
  stopAll(): void;
  /** Resolves once no evaluation runs. */
  settled(): Promise<void>;
  /** Forget the Tenants (the run has stopped). */
  clear(): void;
}

/** Tenant.spec.quota.hard as the syncer holds pods against it (entries Ring0 does not enforce are left out). */
function quotaOf(tenant: TenantResource | undefined): QuotaHard | undefined {
  const hard = hardOfTenant(tenant);
  return Object.keys(hard).length > 0 ? hard : undefined;
}

function sameHard(a: QuotaHard | undefined, b: QuotaHard | undefined): boolean {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]) as Set<keyof QuotaHard>;
  return (a === undefined) === (b === undefined) && [...keys].every((key) => a?.[key] === b?.[key]);
}

function placementOf(tenant: TenantResource | undefined): PlacementPolicy {
  const syncer = (tenant?.spec?.syncer ?? {}) as { nodeSelector?: unknown; tolerations?: unknown };
  const placement: PlacementPolicy = {};
  if (syncer.nodeSelector && typeof syncer.nodeSelector === "object") {
    placement.nodeSelector = syncer.nodeSelector as Record<string, string>;
  }
  if (Array.isArray(syncer.tolerations)) placement.tolerations = syncer.tolerations as Json[];
  return placement;
}
export function createTenantSessions(options: TenantSessionOptions): TenantSessions {
  const { context, directory, policy, serves, enqueue } = options;
  const { superCluster, log, clock } = context;
  const connections = createConnectionCache();
  const sessions = new Map<string, TenantSession>();
  const tenants = new Map<string, TenantResource>();
  /** Tenants whose prefix another, older tenant holds: never synced while both exist. */
  let refusedTenants = new Map<string, PrefixRefusal>();
  /** `${tenant}\0${owner}` already reported, so a refusal is an event once, not every re-check. */
  const reportedRefusals = new Set<string>();
  let tenantsSynced = false;
  const evaluating = new Map<string, Promise<void>>();

  /** Held pods get another look (room may have appeared, or the quota changed). */
  function requeueHeld(session: TenantSession): void {
    for (const key of session.quotaHold.held) {
      const slash = key.indexOf("/");
      enqueue(session.tenant, workKey("pod", key.slice(0, slash), key.slice(slash + 1)));
    }
  }

  function onTenantsChanged(list: TenantResource[]): void {
    tenantsSynced = true;
    // Every Tenant counts, served here or not: a replica serving one of two colliding tenants
    // must refuse it all the same.
    refusedTenants = prefixRefusals(
      list.map((tenant) => ({ name: tenant.metadata.name, createdAt: tenant.metadata.creationTimestamp })),
    );
    for (const id of reportedRefusals) {
      const [tenant, owner] = id.split("\0");
      if (refusedTenants.get(tenant ?? "")?.owner !== owner) reportedRefusals.delete(id);
    }
    const seen = new Set<string>();
    for (const tenant of list) {
      if (!serves(tenant.metadata.name)) continue;
      seen.add(tenant.metadata.name);
      tenants.set(tenant.metadata.name, tenant);
      const weight = tenant.spec?.syncer?.weight;
      if (typeof weight === "number" && !refusedTenants.has(tenant.metadata.name)) {
        options.queue().setWeight(tenant.metadata.name, weight);
      }
      evaluate(tenant.metadata.name);
    }
    for (const name of [...tenants.keys()]) {
      if (!seen.has(name)) {
        tenants.delete(name);
        evaluate(name);
      }
    }
  }

  /** Serialised per tenant: look the tenant up and start, pause or drop its session. */
  function evaluate(name: string): void {
    const previous = evaluating.get(name) ?? Promise.resolve();
    const next = previous
      .then(() => evaluateNow(name))
      .catch((error) => log.warn("evaluating a tenant failed", { tenant: name, error: messageOf(error) }))
      .finally(() => {
        if (evaluating.get(name) === next) evaluating.delete(name);
      });
    evaluating.set(name, next);
  }

  async function evaluateNow(name: string): Promise<void> {
    if (!options.running()) return;
    const resource = tenants.get(name);
    if (!resource) {
      stopSession(name);
      options.queue().removeTenant(name);
      options.forget(name);
      // Its control plane is gone with it: what was synced below goes now, not at the next patrol.
      await options.collectDeletedTenants({ synced: tenantsSynced, has: (tenant) => tenants.has(tenant) });
      return;
    }
    const refusal = refusedTenants.get(name);
    if (refusal) {
      stopSession(name);
      options.queue().removeTenant(name);
      await reportPrefixRefusal(name, refusal);
      return;
    }
    const lookup = await directory.lookup(name);
    if (!options.running()) return;
    if (lookup.state !== "ready") {
      if (sessions.has(name)) {
        log.info("tenant control plane not serving; its sync is paused", {
          tenant: name,
          state: lookup.state,
        });
      }
      stopSession(name);
      options.queue().pause(name);
      return;
    }
    const conn = connections.connectionFor(name, lookup.access);
    const current = sessions.get(name);
    if (current && current.conn !== conn) stopSession(name);
    const session = sessions.get(name) ?? startSession(name, conn);
    if (session.kubeletHost !== (lookup.access.kubeletHost ?? "localhost")) {
      session.kubeletHost = lookup.access.kubeletHost ?? "localhost";
      // Its vNodes name the new address on their next sync.
      for (const vNode of session.vNodes.values()) enqueue(name, workKey("node", "", vNode.metadata.name));
    }
    session.placement = {
      ...placementOf(resource),
      podLabels: options.superPodLabels,
      ...(lookup.access.podEndpoint
        ? {
            podApi: { ...lookup.access.podEndpoint, ca: lookup.access.ca },
            ...(options.podDns ? { podDns: options.podDns } : {}),
          }
        : {}),
    };
    const isolation = tenantIsolationPolicy(
      policy,
      resource.spec?.syncer?.podSecurity,
      resource.spec?.syncer?.runtimeClass,
    );
    // A new default runtime class reaches pods as they are next synced (a running pod keeps its own).
    const levelChanged = session.isolation.podSecurity !== isolation.podSecurity;
    session.isolation = isolation;
    if (levelChanged) {
      // The super namespaces' Pod Security labels follow the tenant's level.
      for (const namespace of session.caches.namespace.values()) {
        enqueue(name, workKey("namespace", "", namespace.metadata.name));
      }
    }
    const quota = quotaOf(resource);
    if (!sameHard(quota, session.quota)) {
      session.quota = quota;
      // A raised (or removed) quota may let held pods go.
      requeueHeld(session);
    }
    if (session.synced && !session.unreachable) options.queue().resume(name);
  }

  function startSession(tenant: string, conn: ClusterConnection): TenantSession {
    options.queue().pause(tenant);
    const session = {
      tenant,
      conn,
      placement: {},
      kubeletHost: "localhost",
      isolation: policy,
      synced: false,
      unreachable: false,
      stopped: false,
      namespaces: new Set<string>(),
      quotaHold: createQuotaHoldState(),
      defaultShares: new Set<string>(),
      identities: new Map(),
    } as unknown as TenantSession;
    const onError = (error: K8sError) => {
      if (isUnreachable(error)) void noticeUnreachable(tenant);
    };
    const caches = {} as Record<SyncedKind, WatchCache<Obj>>;
    for (const kind of syncedKinds) {
      const info = kindInfo[kind];
      caches[kind] = createWatchCache<Obj>(
        conn,
        { path: `${groupVersionPath(info.apiVersion)}/${info.resource}` },
        (object, previous, deleted) => {
          if (session.stopped) return;
          const namespace = object.metadata.namespace ?? "";
          enqueue(tenant, workKey(kind, namespace, object.metadata.name));
          if (kind === "service") enqueue(tenant, workKey("endpoints", namespace, object.metadata.name));
          // Its pods' markers below follow the tenant's policies (network-policies.ts, policyMarkers),
          // where there are markers at all.
          if (kind === "networkpolicy" && context.boundaryOf(tenant)) {
            for (const pod of session.caches.pod?.values() ?? []) {
              if (pod.metadata.namespace === namespace)
                enqueue(tenant, workKey("pod", namespace, pod.metadata.name));
            }
          }
          if (kind === "namespace") session.namespaces.delete(object.metadata.name);
          // A namespace made again under the same name is new again.
          if (kind === "namespace" && deleted) session.defaultShares.delete(object.metadata.name);
          if (kind === "pod") {
            for (const node of new Set([nodeNameOf(object), nodeNameOf(previous)])) {
              if (node) enqueue(tenant, workKey("node", "", node));
            }
            // A pod that went away or finished may make room for held ones.
            if (
              session.quotaHold.held.size > 0 &&
              (deleted || object.metadata.deletionTimestamp || isTerminal(object))
            ) {
              requeueHeld(session);
            }
          }
        },
        onError,
      );
    }
    session.caches = caches;
    session.vNodes = createWatchCache<Obj>(
      conn,
      { path: NodeKind.path(), labelSelector: `${vNodeLabel}=true` },
      (object) => {
        if (!session.stopped) enqueue(tenant, workKey("node", "", object.metadata.name));
      },
      onError,
    );
    sessions.set(tenant, session);
    void Promise.all([...Object.values(caches), session.vNodes].map((cache) => cache.synced())).then(() => {
      if (session.stopped) return;
      session.synced = true;
      log.info("tenant control plane watched; syncing", { tenant });
      ensureTenantClasses(options.context, session).catch((error: unknown) =>
        log.warn("could not give the tenant the runtime and storage classes it may name", {
          tenant,
          error: error instanceof Error ? error.message : String(error),
        }),
      );
      if (!session.unreachable) options.queue().resume(tenant);
    });
    return session;
  }

  /** Log and record on the Tenant, once per owner, that the tenant is refused for its prefix. */
  async function reportPrefixRefusal(tenant: string, refusal: PrefixRefusal): Promise<void> {
    const id = `${tenant}\0${refusal.owner}`;
    if (reportedRefusals.has(id)) return;
    reportedRefusals.add(id);
    const message = `Tenant ${tenant} is not synced: its super-cluster prefix ${refusal.prefix} is also tenant ${refusal.owner}'s (a hash collision), and ${refusal.owner} is older; rename ${tenant} (create it again under another name).`;
    log.warn("tenant refused: its prefix collides with another tenant's", {
      tenant,
      owner: refusal.owner,
      prefix: refusal.prefix,
    });
    await recordEvent(
      superCluster,
      {
        apiVersion: tenantApiVersion,
        kind: tenantKind,
        name: tenant,
        uid: tenants.get(tenant)?.metadata.uid,
      },
      { type: "Warning", reason: "PrefixCollision", message },
      { component: syncerComponent, logger: log },
    );
  }

  function stopSession(tenant: string): void {
    const session = sessions.get(tenant);
    if (!session) return;
    session.stopped = true;
    for (const cache of Object.values(session.caches)) cache.stop();
    session.vNodes.stop();
    sessions.delete(tenant);
  }

  /** The tenant's control plane stopped answering: pause its queue until /readyz answers again. */
  const probing = new Set<TenantSession>();

  async function noticeUnreachable(tenant: string): Promise<void> {
    const session = sessions.get(tenant);
    if (!session || session.unreachable || probing.has(session)) return;
    probing.add(session);
    const health = await clusterHealth(session.conn, { timeoutMs: 2_000 }).finally(() =>
      probing.delete(session),
    );
    if (health.ok || session.stopped || session.unreachable) return;
    session.unreachable = true;
    options.queue().pause(tenant);
    log.warn("tenant control plane unreachable; its sync is paused", { tenant, detail: health.detail });
    void (async () => {
      while (options.running() && !session.stopped) {
        await clock.sleep(1_000);
        if ((await clusterHealth(session.conn, { timeoutMs: 2_000 })).ok) break;
      }
      session.unreachable = false;
      if (options.running() && !session.stopped && session.synced) {
        log.info("tenant control plane answers again; its sync resumes", { tenant });
        options.queue().resume(tenant);
      }
    })();
  }

  return {
    sessions,
    synced: () => tenantsSynced,
    has: (tenant) => tenants.has(tenant),
    names: () => tenants.keys(),
    isRefused: (tenant) => refusedTenants.has(tenant),
    onTenantsChanged,
    evaluate,
    noticeUnreachable,
    stopAll() {
      for (const tenant of [...sessions.keys()]) stopSession(tenant);
    },
    async settled() {
      await Promise.allSettled([...evaluating.values()]);
    },
    clear() {
      tenants.clear();
      tenantsSynced = false;
    },
  };
}
