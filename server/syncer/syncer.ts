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
 * This file wires the engine and runs it: tenants and their sessions are tenant-sessions.ts, the
 * queue and its workers work.ts, the super cluster's watches super-watches.ts. One key's reconcile
 * is reconcile.ts, vNodes are vnodes.ts, the patroller is patroller.ts, what gets written is
 * translate.ts and its pure neighbours.
 */

import { type Clock, systemClock } from "@/server/controllers/clock";
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { Logger } from "@/server/logger";
import { controlPlaneNamespace } from "@/server/provisioners/kubernetes/naming";
import type { ControlPlaneDirectory } from "@/server/tenants/control-planes";
import { tenantInformer } from "@/server/tenants/tenant-resources";
import { type FairQueue, type IsolationPolicy, syncLabels } from "./contracts";
import { defaultIsolationPolicy } from "./isolation-schema";
import { DEFAULT_EGRESS_BLOCK } from "./network-policies";
import { createPatroller, type PatrolCounts } from "./patroller";
import { createReconcilers } from "./reconcile";
import {
  messageOf,
  type Obj,
  type PatrolKind,
  parseWorkKey,
  type SyncContext,
  syncerComponent,
} from "./session";
import { createSuperWatches } from "./super-watches";
import { ensureTenantClasses } from "./tenant-classes";
import { createTenantSessions } from "./tenant-sessions";
import { createVNodes } from "./vnodes";
import { createWork } from "./work";

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
  /** The address of the pods' DNS server (server/cluster/real-node/pod-dns.ts), when one serves. */
  podDns?: string;
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
  /**
   * Where no host wall keeps tenants' pods apart (Ring0 in a cluster, an operator's super cluster):
   * NetworkPolicies are the wall (network-policies.ts): Ring0's three in every super namespace,
   * each tenant policy confined, each pod marked by the tenant policies that select it.
   *   admits       the tenants whose pods may reach `tenant`'s (RING0_TENANT_TRAFFIC_ALLOW)
   *   podRanges    the super cluster's pod ranges (RING0_POD_CIDRS); empty: unknown (no tenant
   *                ingress ipBlock admits anything, no Endpoints address but the tenant's own pods')
   *   egressBlock  ranges no tenant pod reaches (link-local always, and the operator's)
   *   egressAllow  addresses inside those that pods may reach (NodeLocal DNSCache)
   */
  tenantBoundary?: {
    admits(tenant: string): string[];
    podRanges: string[];
    egressBlock: string[];
    egressAllow: string[];
  };
}

export interface Syncer {
  start(): Promise<void>;
  stop(): Promise<void>;
  stats(): SyncerStats;
  /** Run one patrol now (tests and the operator console); resolves when it has queued its repairs. */
  patrol(): Promise<void>;
}

export function createSyncer(options: SyncerOptions): Syncer {
  const { superCluster, directory } = options;
  const log = options.logger.child({ component: syncerComponent });
  const clock = options.clock ?? systemClock;
  const workerCount = options.workers ?? 4;
  const patrolIntervalMs = options.patrolIntervalMs ?? 60_000;
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 10_000;
  /** How often pods' tokens are checked for renewal (each is renewed at 80% of its lifetime). */
  const identityCheckMs = 30_000;
  const tenantRecheckMs = options.tenantRecheckMs ?? 5_000;
  const policy = options.isolationPolicy ?? defaultIsolationPolicy();
  const serves = options.tenantFilter ?? (() => true);

  /** Keys the patroller queued: a successful reconcile of one counts as a repair. */
  const patrolFlags = new Map<string, PatrolKind>();
  const patrolStats = new Map<string, Map<PatrolKind, PatrolCounts>>();
  let patrols = 0;
  let releaseTenants: (() => void) | undefined;
  const timers: (() => void)[] = [];
  let running = false;

  // The parts call each other only once the syncer runs, so each may name one made after it.
  const context: SyncContext = {
    superCluster,
    log,
    clock,
    superPods: () => superWatches.pods(),
    superNodes: () => superWatches.nodes(),
    superNamespaces: () => superWatches.namespaces(),
    superEvents: () => superWatches.events(),
    namespaceDefaultShare: options.namespaceDefaultShare,
    boundaryOf: (tenant) => {
      const boundary = options.tenantBoundary;
      if (!boundary) return undefined;
      return {
        controlPlaneNamespace: controlPlaneNamespace(tenant),
        admits: boundary.admits(tenant),
        podRanges: boundary.podRanges,
        isNodeAddress: (address) => {
          for (const node of superWatches.nodes()?.values() ?? []) {
            if (nodeAddresses(node).includes(address)) return true;
          }
          return false;
        },
        ownsPodAddress: (address) => {
          for (const pod of superWatches.pods()?.values() ?? []) {
            if (podAddresses(pod).includes(address))
              return pod.metadata.labels?.[syncLabels.tenant] === tenant;
          }
          return false;
        },
        egressBlock: [...new Set([...DEFAULT_EGRESS_BLOCK, ...boundary.egressBlock])],
        egressAllow: boundary.egressAllow,
      };
    },
    superBoundaries: () => superWatches.boundaries(),
  };
  const work = createWork({
    clock,
    log,
    accepts: (tenant) => running && serves(tenant) && !tenants.isRefused(tenant),
    reconcile,
    unreachable: (tenant) => tenants.noticeUnreachable(tenant),
    done: countRepair,
  });
  const vNodes = createVNodes(context, (tenant) => void tenants.noticeUnreachable(tenant));
  const reconcilers = createReconcilers(context, vNodes);
  const patroller = createPatroller(context, {
    vNodes,
    serves,
    flag(tenant, kind, key) {
      countPatrol(tenant, kind, "mismatched");
      patrolFlags.set(`${tenant}\0${key}`, kind);
      work.enqueue(tenant, key);
    },
    count: countPatrol,
  });
  const tenants = createTenantSessions({
    context,
    directory,
    policy,
    superPodLabels: options.superPodLabels,
    podDns: options.podDns,
    serves,
    running: () => running,
    queue: () => work.queue(),
    enqueue: work.enqueue,
    forget: (tenant) => patrolStats.delete(tenant),
    collectDeletedTenants: (known) => patroller.collectDeletedTenants(known),
  });
  const superWatches = createSuperWatches({
    superCluster,
    log,
    serves,
    enqueue: work.enqueue,
    sessions: tenants.sessions,
    boundaries: options.tenantBoundary !== undefined,
  });

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

  function countRepair(tenant: string, key: string): void {
    const id = `${tenant}\0${key}`;
    const flagged = patrolFlags.get(id);
    if (flagged) {
      patrolFlags.delete(id);
      countPatrol(tenant, flagged, "repaired");
    }
  }

  async function reconcile(tenant: string, key: string): Promise<"done" | "retry"> {
    const session = tenants.sessions.get(tenant);
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

  async function patrol(): Promise<void> {
    for (const session of [...tenants.sessions.values()]) {
      if (!session.synced || session.unreachable || session.stopped) continue;
      try {
        await patroller.patrolTenant(session);
      } catch (error) {
        log.warn("patrolling a tenant failed", { tenant: session.tenant, error: messageOf(error) });
      }
    }
    try {
      await patroller.collectDeletedTenants({
        synced: tenants.synced(),
        has: (tenant) => tenants.has(tenant),
      });
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

  return {
    async start() {
      if (running) return;
      running = true;
      work.renew();
      await superWatches.start();
      if (!running) return;
      superWatches.watchEvents();
      work.startWorkers(workerCount);
      const informer = tenantInformer(superCluster);
      releaseTenants = informer.subscribe(tenants.onTenantsChanged);
      every(
        tenantRecheckMs,
        async () => {
          for (const name of tenants.names()) tenants.evaluate(name);
        },
        "re-checking tenants",
      );
      every(heartbeatIntervalMs, () => vNodes.heartbeat(tenants.sessions.values()), "renewing vNode leases");
      every(
        Math.max(heartbeatIntervalMs * 6, 30_000),
        () => vNodes.refreshStatus(tenants.sessions.values()),
        "refreshing vNodes",
      );
      every(patrolIntervalMs, patrol, "patrolling");
      every(
        identityCheckMs,
        async () => {
          for (const session of tenants.sessions.values()) {
            if (session.stopped) continue;
            for (const key of reconcilers.identities.due(session)) work.enqueue(session.tenant, key);
            if (session.synced && !session.classesCopied) {
              await ensureTenantClasses(context, session).catch((error: unknown) =>
                log.warn("could not give a tenant the runtime and storage classes it may name", {
                  tenant: session.tenant,
                  error: messageOf(error),
                }),
              );
            }
          }
        },
        "renewing pods' tokens and copying runtime and storage classes",
      );
      log.info("syncer started", { workers: workerCount, patrolIntervalMs });
    },

    async stop() {
      if (!running) return;
      running = false;
      releaseTenants?.();
      for (const cancel of timers.splice(0)) cancel();
      work.cancelRetries();
      tenants.stopAll();
      superWatches.stop();
      work.queue().shutdown();
      await work.workersDone();
      await tenants.settled();
      work.clear();
      patrolFlags.clear();
      tenants.clear();
      log.info("syncer stopped");
    },

    stats() {
      const patrol: SyncerStats["patrol"] = {};
      for (const [tenant, perKind] of patrolStats) patrol[tenant] = Object.fromEntries(perKind);
      const tenantStates: SyncerStats["tenants"] = {};
      for (const session of tenants.sessions.values()) {
        tenantStates[session.tenant] = {
          state: session.unreachable ? "unreachable" : session.synced ? "syncing" : "starting",
          vNodes: session.vNodes.size(),
        };
      }
      // A deleted tenant's last queue entries may outlive it briefly: report current tenants only.
      const queueStats = Object.fromEntries(
        Object.entries(work.queue().stats()).filter(([tenant]) => tenants.has(tenant)),
      );
      return { queue: queueStats, patrol, tenants: tenantStates, patrols };
    },

    patrol,
  };
}

/** The addresses a node reports. */
function nodeAddresses(node: Obj): string[] {
  const addresses = (node.status as { addresses?: { address?: unknown }[] } | undefined)?.addresses ?? [];
  return addresses.map((entry) => entry.address).filter((address) => typeof address === "string");
}

/** A pod's addresses (status.podIPs, or status.podIP). */
function podAddresses(pod: Obj): string[] {
  const status = (pod.status ?? {}) as { podIP?: unknown; podIPs?: { ip?: unknown }[] };
  const listed = (status.podIPs ?? []).map((entry) => entry.ip).filter((ip) => typeof ip === "string");
  return [...listed, ...(typeof status.podIP === "string" ? [status.podIP] : [])] as string[];
}
