/**
 * The syncer (issue 5, seed 002): tenant objects down into the super cluster, pod status, service
 * load balancers, events and vNodes up into each tenant control plane.
 *
 *   watches       per Ready tenant: namespaces, pods, services, endpoints, configmaps, secrets,
 *                 service accounts and Ring0's vNodes in its control plane; once: the super
 *                 cluster's synced pods, namespaces and services, its nodes, and its pod events
 *   fair queue    every change becomes a key (kind|namespace|name) in the tenant's queue; workers
 *                 take keys by weighted round robin (Tenant spec.syncer.weight)
 *   reconcile     one key, read from the caches, ordered idempotent writes (server-side apply as
 *                 "ring0", hash annotations so unchanged objects are not written again)
 *   vNodes        a Node per super node running the tenant's pods, with a Lease Ring0 renews as the
 *                 kubelet would, so the tenant's node lifecycle controller keeps it Ready
 *   patroller     compares both sides per tenant and kind, re-queues what drifted, counts it
 *
 * This file is the engine: tenants and their sessions, the queue and its workers, the super
 * cluster's watches. One key's reconcile is reconcile.ts, vNodes are vnodes.ts, the patroller is
 * patroller.ts, what gets written is translate.ts (pure).
 */

import { hardOfTenant } from "@/server/admission/hard";
import { type Clock, systemClock } from "@/server/controllers/clock";
import type { QuotaHard } from "@/server/core/quota-resources";
import { type ClusterConnection, clusterHealth } from "@/server/k8s/cluster";
import { isUnreachable, type K8sError } from "@/server/k8s/errors";
import { recordEvent } from "@/server/k8s/events";
import type { Logger } from "@/server/logger";
import type { ControlPlaneDirectory } from "@/server/tenants/control-planes";
import { createConnectionCache } from "@/server/tenants/reconciler";
import {
  type TenantResource,
  tenantApiVersion,
  tenantInformer,
  tenantKind,
} from "@/server/tenants/tenant-resources";
import { type FairQueue, type IsolationPolicy, syncAnnotations, syncLabels } from "./contracts";
import { createFairQueue } from "./fair-queue";
import { defaultIsolationPolicy, tenantIsolationPolicy } from "./filter";
import { createInFlightKeys, retryDelayMs } from "./in-flight";
import { type PrefixRefusal, prefixRefusals } from "./naming";
import { createPatroller, type PatrolCounts } from "./patroller";
import { createQuotaHoldState } from "./quota-hold";
import { createReconcilers } from "./reconcile";
import {
  isTerminal,
  messageOf,
  nodeNameOf,
  type Obj,
  type PatrolKind,
  parseWorkKey,
  type SyncContext,
  syncerComponent,
  type TenantSession,
  workKey,
} from "./session";
import {
  hashOf,
  type Json,
  kindInfo,
  type PlacementPolicy,
  type SyncedKind,
  syncedKinds,
  vNodeContent,
  vNodeLabel,
} from "./translate";
import { createVNodes } from "./vnodes";
import { createWatchCache, type WatchCache } from "./watch-cache";

export type { PatrolCounts } from "./patroller";
export { boundNodeAnnotation } from "./session";

export interface SyncerStats {
  queue: ReturnType<FairQueue<string>["stats"]>;
  /** Per tenant and kind, totals since start. */
  patrol: Record<string, Partial<Record<PatrolKind, PatrolCounts>>>;
  tenants: Record<string, { state: "starting" | "syncing" | "unreachable"; vNodes: number }>;
  patrols: number;
}

export interface SyncerOptions {
  superCluster: ClusterConnection;
  directory: ControlPlaneDirectory;
  logger: Logger;
  clock?: Clock;
  /** Concurrent reconciles across all tenants (default 4). */
  workers?: number;
  /** How often the patroller compares both sides (default 60 s). */
  patrolIntervalMs?: number;
  /** How often vNode leases are renewed (default 10 s, as the kubelet does for a 40 s lease). */
  heartbeatIntervalMs?: number;
  /** How often tenants are looked up again in the directory besides Tenant changes (default 5 s). */
  tenantRecheckMs?: number;
  isolationPolicy?: IsolationPolicy;
  /** Labels every synced pod gets in the super cluster (see PlacementPolicy.podLabels). */
  superPodLabels?: Record<string, string>;
  /**
   * Which tenants this syncer serves (default: all). Lets replicas shard tenants, and keeps an
   * integration test to its own tenants in a super cluster other suites share.
   */
  tenantFilter?: (tenant: string) => boolean;
  /**
   * The tenant's default namespace share (issue 7): a new namespace without a ResourceQuota gets a
   * `default-share` one with these limits. Absent, or resolving undefined: nothing is created.
   */
  namespaceDefaultShare?: (tenant: string) => Promise<Record<string, string> | undefined>;
}

export interface Syncer {
  start(): Promise<void>;
  stop(): Promise<void>;
  stats(): SyncerStats;
  /** Run one patrol now (tests and the operator console); resolves when it has queued its repairs. */
  patrol(): Promise<void>;
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

export function createSyncer(options: SyncerOptions): Syncer {
  const { superCluster, directory } = options;
  const log = options.logger.child({ component: syncerComponent });
  const clock = options.clock ?? systemClock;
  const workerCount = options.workers ?? 4;
  const patrolIntervalMs = options.patrolIntervalMs ?? 60_000;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 10_000;
  const tenantRecheckMs = options.tenantRecheckMs ?? 5_000;
  const policy = options.isolationPolicy ?? defaultIsolationPolicy();
  const connections = createConnectionCache();
  const serves = options.tenantFilter ?? (() => true);

  let queue: FairQueue<string> = createFairQueue<string>({ clock });
  const sessions = new Map<string, TenantSession>();
  const tenants = new Map<string, TenantResource>();
  /** Tenants whose prefix another, older tenant holds: never synced while both exist. */
  let refusedTenants = new Map<string, PrefixRefusal>();
  /** `${tenant}\0${owner}` already reported, so a refusal is an event once, not every re-check. */
  const reportedRefusals = new Set<string>();
  let tenantsSynced = false;
  const evaluating = new Map<string, Promise<void>>();
  /** `${tenant}\0${key}` being reconciled now, those changed meanwhile, and failures in a row. */
  const inFlight = createInFlightKeys();
  const retryTimers = new Map<string, () => void>();
  /** Keys the patroller queued: a successful reconcile of one counts as a repair. */
  const patrolFlags = new Map<string, PatrolKind>();
  const patrolStats = new Map<string, Map<PatrolKind, PatrolCounts>>();
  let patrols = 0;

  let superPods: WatchCache<Obj> | undefined;
  let superNamespaces: WatchCache<Obj> | undefined;
  let superNodes: WatchCache<Obj> | undefined;
  let superEvents: WatchCache<Obj> | undefined;
  let superServices: WatchCache<Obj> | undefined;
  let releaseTenants: (() => void) | undefined;
  let workers: Promise<void>[] = [];
  const context: SyncContext = {
    superCluster,
    log,
    clock,
    superPods: () => superPods,
    superNodes: () => superNodes,
    superNamespaces: () => superNamespaces,
    superEvents: () => superEvents,
    namespaceDefaultShare: options.namespaceDefaultShare,
  };
  const vNodes = createVNodes(context, (tenant) => void noticeUnreachable(tenant));
  const reconcilers = createReconcilers(context, vNodes);
  const patroller = createPatroller(context, {
    vNodes,
    serves,
    flag(tenant, kind, key) {
      countPatrol(tenant, kind, "mismatched");
      patrolFlags.set(`${tenant}\0${key}`, kind);
      enqueue(tenant, key);
    },
    count: countPatrol,
  });
  const timers: (() => void)[] = [];
  let running = false;

  // ---- queueing -----------------------------------------------------------------------------

  /** Held pods get another look (room may have appeared, or the quota changed). */
  function requeueHeld(session: TenantSession): void {
    for (const key of session.quotaHold.held) {
      const slash = key.indexOf("/");
      enqueue(session.tenant, workKey("pod", key.slice(0, slash), key.slice(slash + 1)));
    }
  }

  function enqueue(tenant: string, key: string): void {
    if (!running || !serves(tenant) || refusedTenants.has(tenant)) return;
    const id = `${tenant}\0${key}`;
    if (inFlight.offer(id)) queue.add(tenant, key);
  }

  function enqueueLater(tenant: string, key: string, ms: number): void {
    const id = `${tenant}\0${key}`;
    if (retryTimers.has(id)) return;
    const cancel = clock.setTimer(() => {
      retryTimers.delete(id);
      enqueue(tenant, key);
    }, ms);
    retryTimers.set(id, cancel);
  }

  function countPatrol(tenant: string, kind: PatrolKind, field: keyof PatrolCounts, by = 1): void {
    let perKind = patrolStats.get(tenant);
    if (!perKind) {
      perKind = new Map();
      patrolStats.set(tenant, perKind);
    }
    const counts = perKind.get(kind) ?? { checked: 0, mismatched: 0, repaired: 0 };
    counts[field] += by;
    perKind.set(kind, counts);
  }

  async function work(): Promise<void> {
    for (;;) {
      const next = await queue.next();
      if (!next) return;
      const { tenant, item: key } = next;
      const id = `${tenant}\0${key}`;
      inFlight.begin(id);
      try {
        const outcome = await reconcile(tenant, key);
        inFlight.succeeded(id);
        if (outcome === "retry") enqueueLater(tenant, key, 500);
        else {
          const flagged = patrolFlags.get(id);
          if (flagged) {
            patrolFlags.delete(id);
            countPatrol(tenant, flagged, "repaired");
          }
        }
      } catch (error) {
        const attempt = inFlight.failed(id);
        const delay = retryDelayMs(attempt);
        if (isUnreachable(error)) await noticeUnreachable(tenant);
        if (attempt <= 3)
          log.debug("sync failed; retrying", { tenant, key, attempt, error: messageOf(error) });
        else log.warn("sync keeps failing; retrying", { tenant, key, attempt, error: messageOf(error) });
        enqueueLater(tenant, key, delay);
      } finally {
        if (inFlight.finish(id)) enqueue(tenant, key);
      }
    }
  }

  // ---- tenants ------------------------------------------------------------------------------

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
        queue.setWeight(tenant.metadata.name, weight);
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
    if (!running) return;
    const resource = tenants.get(name);
    if (!resource) {
      stopSession(name);
      queue.removeTenant(name);
      patrolStats.delete(name);
      // Its control plane is gone with it: what was synced below goes now, not at the next patrol.
      await patroller.collectDeletedTenants({ synced: tenantsSynced, has: (tenant) => tenants.has(tenant) });
      return;
    }
    const refusal = refusedTenants.get(name);
    if (refusal) {
      stopSession(name);
      queue.removeTenant(name);
      await reportPrefixRefusal(name, refusal);
      return;
    }
    const lookup = await directory.lookup(name);
    if (!running) return;
    if (lookup.state !== "ready") {
      if (sessions.has(name)) {
        log.info("tenant control plane not serving; its sync is paused", {
          tenant: name,
          state: lookup.state,
        });
      }
      stopSession(name);
      queue.pause(name);
      return;
    }
    const conn = connections.connectionFor(name, lookup.access);
    const current = sessions.get(name);
    if (current && current.conn !== conn) stopSession(name);
    const session = sessions.get(name) ?? startSession(name, conn);
    session.placement = { ...placementOf(resource), podLabels: options.superPodLabels };
    const isolation = tenantIsolationPolicy(policy, resource.spec?.syncer?.podSecurity);
    if (session.isolation.podSecurity !== isolation.podSecurity) {
      session.isolation = isolation;
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
    if (session.synced && !session.unreachable) queue.resume(name);
  }

  function startSession(tenant: string, conn: ClusterConnection): TenantSession {
    queue.pause(tenant);
    const session = {
      tenant,
      conn,
      placement: {},
      isolation: policy,
      synced: false,
      unreachable: false,
      stopped: false,
      namespaces: new Set<string>(),
      quotaHold: createQuotaHoldState(),
      defaultShares: new Set<string>(),
    } as unknown as TenantSession;
    const onError = (error: K8sError) => {
      if (isUnreachable(error)) void noticeUnreachable(tenant);
    };
    const caches = {} as Record<SyncedKind, WatchCache<Obj>>;
    for (const kind of syncedKinds) {
      const info = kindInfo[kind];
      caches[kind] = createWatchCache<Obj>(
        conn,
        { path: `/api/v1/${info.resource}` },
        (object, previous, deleted) => {
          if (session.stopped) return;
          const namespace = object.metadata.namespace ?? "";
          enqueue(tenant, workKey(kind, namespace, object.metadata.name));
          if (kind === "service") enqueue(tenant, workKey("endpoints", namespace, object.metadata.name));
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
      { path: "/api/v1/nodes", labelSelector: `${vNodeLabel}=true` },
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
      if (!session.unreachable) queue.resume(tenant);
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
    queue.pause(tenant);
    log.warn("tenant control plane unreachable; its sync is paused", { tenant, detail: health.detail });
    void (async () => {
      while (running && !session.stopped) {
        await clock.sleep(1_000);
        if ((await clusterHealth(session.conn, { timeoutMs: 2_000 })).ok) break;
      }
      session.unreachable = false;
      if (running && !session.stopped && session.synced) {
        log.info("tenant control plane answers again; its sync resumes", { tenant });
        queue.resume(tenant);
      }
    })();
  }

  // ---- reconcile ----------------------------------------------------------------------------

  async function reconcile(tenant: string, key: string): Promise<"done" | "retry"> {
    const session = sessions.get(tenant);
    if (!session || session.stopped) return "done";
    if (!session.synced) return "retry";
    const { kind, namespace, name } = parseWorkKey(key);
    switch (kind) {
      case "pod":
        await reconcilers.syncPod(session, namespace, name);
        return "done";
      case "node":
        await vNodes.sync(session, name);
        return "done";
      case "event":
        await reconcilers.syncEvent(session, namespace, name);
        return "done";
      default:
        await reconcilers.syncObject(session, kind, namespace, name);
        return "done";
    }
  }

  // ---- events -------------------------------------------------------------------------------

  function onSuperEvent(event: Obj, deleted: boolean): void {
    if (deleted) return;
    const namespace = event.metadata.namespace ?? "";
    const owner = superNamespaces?.get("", namespace);
    const tenant = owner?.metadata.labels?.[syncLabels.tenant];
    const tenantNamespace = owner?.metadata.annotations?.[syncAnnotations.namespace];
    if (!tenant || !tenantNamespace) return;
    enqueue(tenant, workKey("event", tenantNamespace, event.metadata.name));
  }

  // ---- patroller ----------------------------------------------------------------------------

  async function patrol(): Promise<void> {
    for (const session of [...sessions.values()]) {
      if (!session.synced || session.unreachable || session.stopped) continue;
      try {
        await patroller.patrolTenant(session);
      } catch (error) {
        log.warn("patrolling a tenant failed", { tenant: session.tenant, error: messageOf(error) });
      }
    }
    try {
      await patroller.collectDeletedTenants({ synced: tenantsSynced, has: (tenant) => tenants.has(tenant) });
    } catch (error) {
      log.warn("collecting deleted tenants' namespaces failed", { error: messageOf(error) });
    }
    patrols++;
  }

  function every(ms: number, task: () => Promise<void>, name: string): void {
    let cancel: () => void = () => {};
    let stopped = false;
    const schedule = () => {
      cancel = clock.setTimer(async () => {
        if (stopped || !running) return;
        try {
          await task();
        } catch (error) {
          log.warn(`${name} failed`, { error: messageOf(error) });
        }
        if (!stopped && running) schedule();
      }, ms);
    };
    schedule();
    timers.push(() => {
      stopped = true;
      cancel();
    });
  }

  // ---- super cluster watches ----------------------------------------------------------------

  function onSuperPod(pod: Obj, previous: Obj | undefined): void {
    const tenant = pod.metadata.labels?.[syncLabels.tenant];
    if (!tenant || !serves(tenant)) return;
    const namespace = pod.metadata.annotations?.[syncAnnotations.namespace];
    const name = pod.metadata.annotations?.[syncAnnotations.name];
    if (!tenant || namespace === undefined || !name) return;
    enqueue(tenant, workKey("pod", namespace, name));
    for (const node of new Set([nodeNameOf(pod), nodeNameOf(previous)])) {
      if (node) enqueue(tenant, workKey("node", "", node));
    }
  }

  function onSuperNamespace(namespace: Obj, _previous: Obj | undefined, deleted: boolean): void {
    const tenant = namespace.metadata.labels?.[syncLabels.tenant];
    const tenantNamespace = namespace.metadata.annotations?.[syncAnnotations.namespace];
    if (!tenant || tenantNamespace === undefined) return;
    if (deleted || namespace.metadata.deletionTimestamp)
      sessions.get(tenant)?.namespaces.delete(tenantNamespace);
    if (deleted) enqueue(tenant, workKey("namespace", "", tenantNamespace));
  }

  /** A synced service's load balancer changed below (or the copy went): its tenant's key again. */
  function onSuperService(service: Obj, previous: Obj | undefined, deleted: boolean): void {
    const tenant = service.metadata.labels?.[syncLabels.tenant];
    const namespace = service.metadata.annotations?.[syncAnnotations.namespace];
    const name = service.metadata.annotations?.[syncAnnotations.name];
    if (!tenant || !serves(tenant) || namespace === undefined || !name) return;
    const loadBalancer = (object: Obj | undefined) =>
      JSON.stringify((object?.status as Json | undefined)?.loadBalancer ?? null);
    if (deleted || loadBalancer(service) !== loadBalancer(previous))
      enqueue(tenant, workKey("service", namespace, name));
  }

  function onSuperNode(node: Obj, previous: Obj | undefined): void {
    const changed =
      !previous ||
      hashOf(vNodeContent(node as Json, undefined)) !== hashOf(vNodeContent(previous as Json, undefined));
    if (!changed) return;
    for (const session of sessions.values()) {
      if (session.vNodes.get("", node.metadata.name))
        enqueue(session.tenant, workKey("node", "", node.metadata.name));
    }
  }

  return {
    async start() {
      if (running) return;
      running = true;
      queue = createFairQueue<string>({ clock });
      const reportSuperError = (what: string) => (error: K8sError) =>
        log.debug(`watching ${what} in the super cluster failed`, { error: error.message });
      superNamespaces = createWatchCache<Obj>(
        superCluster,
        { path: "/api/v1/namespaces", labelSelector: `${syncLabels.managed}=true` },
        onSuperNamespace,
        reportSuperError("namespaces"),
      );
      superPods = createWatchCache<Obj>(
        superCluster,
        { path: "/api/v1/pods", labelSelector: `${syncLabels.managed}=true` },
        onSuperPod,
        reportSuperError("pods"),
      );
      superNodes = createWatchCache<Obj>(
        superCluster,
        { path: "/api/v1/nodes" },
        onSuperNode,
        reportSuperError("nodes"),
      );
      superServices = createWatchCache<Obj>(
        superCluster,
        { path: "/api/v1/services", labelSelector: `${syncLabels.managed}=true` },
        onSuperService,
        reportSuperError("services"),
      );
      await Promise.all([superNamespaces.synced(), superPods.synced(), superNodes.synced()]);
      if (!running) return;
      superEvents = createWatchCache<Obj>(
        superCluster,
        { path: "/api/v1/events", fieldSelector: "involvedObject.kind=Pod" },
        (event, _previous, deleted) => onSuperEvent(event, deleted),
        reportSuperError("events"),
      );
      workers = Array.from({ length: workerCount }, () => work());
      const informer = tenantInformer(superCluster);
      releaseTenants = informer.subscribe(onTenantsChanged);
      every(
        tenantRecheckMs,
        async () => {
          for (const name of tenants.keys()) evaluate(name);
        },
        "re-checking tenants",
      );
      every(heartbeatIntervalMs, () => vNodes.heartbeat(sessions.values()), "renewing vNode leases");
      every(
        Math.max(heartbeatIntervalMs * 6, 30_000),
        () => vNodes.refreshStatus(sessions.values()),
        "refreshing vNodes",
      );
      every(patrolIntervalMs, patrol, "patrolling");
      log.info("syncer started", { workers: workerCount, patrolIntervalMs });
    },

    async stop() {
      if (!running) return;
      running = false;
      releaseTenants?.();
      for (const cancel of timers.splice(0)) cancel();
      for (const cancel of retryTimers.values()) cancel();
      retryTimers.clear();
      for (const tenant of [...sessions.keys()]) stopSession(tenant);
      for (const cache of [superPods, superNamespaces, superNodes, superEvents, superServices]) cache?.stop();
      queue.shutdown();
      await Promise.allSettled(workers);
      await Promise.allSettled([...evaluating.values()]);
      workers = [];
      inFlight.clear();
      patrolFlags.clear();
      tenants.clear();
      tenantsSynced = false;
      log.info("syncer stopped");
    },

    stats() {
      const patrol: SyncerStats["patrol"] = {};
      for (const [tenant, perKind] of patrolStats) patrol[tenant] = Object.fromEntries(perKind);
      const tenantStates: SyncerStats["tenants"] = {};
      for (const session of sessions.values()) {
        tenantStates[session.tenant] = {
          state: session.unreachable ? "unreachable" : session.synced ? "syncing" : "starting",
          vNodes: session.vNodes.size(),
        };
      }
      // A deleted tenant's last queue entries may outlive it briefly: report current tenants only.
      const queueStats = Object.fromEntries(
        Object.entries(queue.stats()).filter(([tenant]) => tenants.has(tenant)),
      );
      return { queue: queueStats, patrol, tenants: tenantStates, patrols };
    },

    patrol,
  };
}
