/**
 * Leader election through a coordination.k8s.io/v1 Lease (client-go's leaderelection, simplified),
 * so several panel replicas can run and exactly one runs the controllers.
 * - A Lease with no holder, or whose record has not changed for its leaseDurationSeconds as seen
 *   by this process's clock, may be taken. Expiry is judged from when this elector observed the
 *   record change, never from the timestamps in it, so clock skew between replicas does not matter.
 * - The leader renews every renewDeadline/2. If it cannot renew for renewDeadline (< leaseDuration),
 *   it stops leading before anyone else can take over; if it sees another holder, it stops at once.
 * - Stopping ends leadership (onStartedLeading's signal aborts, and its promise is awaited), then
 *   releases the Lease (empty holder, 1 s duration) so another replica takes over quickly.
 * Writes carry the read resourceVersion; a 409 Conflict means read again.
 */
import os from "node:os";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isAlreadyExists, isConflict, isNotFound } from "@/server/k8s/errors";
import { LeaseKind } from "@/server/k8s/kinds/cluster-kinds";
import { kubeRequest } from "@/server/k8s/transport";
import { type Logger, logger as rootLogger } from "@/server/logger";
import { type Clock, systemClock } from "./clock";

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

export interface Lease {
  apiVersion: "coordination.k8s.io/v1";
  kind: "Lease";
  metadata: { name: string; namespace: string; resourceVersion?: string; [key: string]: unknown };
  spec?: LeaseSpec;
}

/** Lease reads and writes; the cluster in production, an in-memory fake in unit tests. */
export interface LeaseStore {
  /** The Lease, or undefined when it does not exist. */
  get(namespace: string, name: string): Promise<Lease | undefined>;
  /** Create; an existing Lease is an AlreadyExists K8sError. */
  create(lease: Lease): Promise<Lease>;
  /** Replace; a stale metadata.resourceVersion is a Conflict K8sError. */
  update(lease: Lease): Promise<Lease>;
}

function leasePath(namespace: string, name?: string): string {
  return LeaseKind.path({ namespace, name });
}

export function clusterLeaseStore(conn: ClusterConnection, timeoutMs = 5_000): LeaseStore {
  return {
    async get(namespace, name) {
      try {
        return await kubeRequest<Lease>(conn, { path: leasePath(namespace, name), timeoutMs });
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    create: (lease) =>
      kubeRequest<Lease>(conn, {
        method: "POST",
        path: leasePath(lease.metadata.namespace),
        body: lease,
        timeoutMs,
      }),
    update: (lease) =>
      kubeRequest<Lease>(conn, {
        method: "PUT",
        path: leasePath(lease.metadata.namespace, lease.metadata.name),
        body: lease,
        timeoutMs,
      }),
  };
}

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** hostname_pid_random: unique per process and per elector. */
export function defaultIdentity(): string {
  return `${os.hostname()}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}

export interface LeaderElectionOptions {
  namespace: string;
  /** The Lease's name (one per thing being led, e.g. "ring0-controllers"). */
  name: string;
  identity?: string;
  /** How long others wait after the record last changed before taking over. Default 15 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives up leading. Default 10 s. */
  renewDeadlineMs?: number;
  /** Wait between attempts to acquire (with up to 20 % jitter) and between failed renewals. Default 2 s. */
  retryPeriodMs?: number;
  clock?: Clock;
  logger?: Logger;
  /** Uniform in [0, 1), for the retry jitter. */
  random?: () => number;
  /**
   * Called on becoming leader. Stop leading work when `signal` aborts; a returned promise is
   * awaited on stop() before the Lease is released.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  onStoppedLeading?(): void;
}

export interface LeaderElector {
  readonly identity: string;
  /** Start contending; aborting `signal` stops (like stop()). */
  start(signal?: AbortSignal): void;
  /** Stop leading (awaiting onStartedLeading's work) and release the Lease if held. */
  stop(): Promise<void>;
  isLeader(): boolean;
}

type Attempt = "held" | "heldByOther" | "conflict";

function recordKey(spec: LeaseSpec | undefined): string {
  return JSON.stringify([spec?.holderIdentity ?? "", spec?.renewTime ?? "", spec?.leaseDurationSeconds ?? 0]);
}

export function createLeaderElector(
  cluster: ClusterConnection | LeaseStore,
  options: LeaderElectionOptions,
): LeaderElector {
  const store = "update" in cluster ? cluster : clusterLeaseStore(cluster);
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const identity = options.identity ?? defaultIdentity();
  const leaseDurationMs = options.leaseDurationMs ?? 15_000;
  const renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
  const retryPeriodMs = options.retryPeriodMs ?? 2_000;
  if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > retryPeriodMs && retryPeriodMs > 0)) {
    throw new RangeError("leader election needs leaseDurationMs > renewDeadlineMs > retryPeriodMs > 0");
  }
  const logger = (options.logger ?? rootLogger).child({
    component: "leader-election",
    lease: `${options.namespace}/${options.name}`,
    identity,
  });
  const stopping = new AbortController();

  let observedRecord = "";
  let observedAt = 0;
  let leading: { abort: AbortController; work: Promise<void>; cancelWatchdog: () => void } | undefined;
  // The work of the last leadership, so a new term (or the release) starts only after it ended.
  let lastWork: Promise<void> = Promise.resolve();
  let heldLease = false;
  let lastRenewAt = 0;
  let running: Promise<void> | undefined;

  function observe(spec: LeaseSpec | undefined, at: number): void {
    const key = recordKey(spec);
    if (key !== observedRecord) {
      observedRecord = key;
      observedAt = at;
    }
  }

  function leaseSpec(previous: LeaseSpec | undefined, at: number): LeaseSpec {
    const renewing = previous?.holderIdentity === identity;
    return {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      acquireTime: renewing && previous?.acquireTime ? previous.acquireTime : microTime(at),
      renewTime: microTime(at),
      leaseTransitions: renewing ? (previous?.leaseTransitions ?? 0) : (previous?.leaseTransitions ?? -1) + 1,
    };
  }

  async function attempt(): Promise<Attempt> {
    const current = await store.get(options.namespace, options.name);
    const now = clock.now();
    if (!current) {
      const spec = leaseSpec(undefined, now);
      try {
        const created = await store.create({
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: options.name, namespace: options.namespace },
          spec,
        });
        observe(created.spec, now);
        return "held";
      } catch (error) {
        if (isAlreadyExists(error) || isConflict(error)) return "conflict";
        throw error;
      }
    }
    observe(current.spec, now);
    const holder = current.spec?.holderIdentity ?? "";
    const durationMs = (current.spec?.leaseDurationSeconds ?? Math.ceil(leaseDurationMs / 1000)) * 1000;
    if (holder !== "" && holder !== identity && now < observedAt + durationMs) return "heldByOther";
    try {
      const updated = await store.update({ ...current, spec: leaseSpec(current.spec, now) });
      observe(updated.spec, now);
      return "held";
    } catch (error) {
      if (isConflict(error)) return "conflict";
      throw error;
    }
  }

  async function tryAttempt(): Promise<Attempt | "failed"> {
    try {
      return await attempt();
    } catch (error) {
      logger.warn("lease request failed", { error: error instanceof Error ? error.message : String(error) });
      return "failed";
    }
  }

  function armWatchdog(): () => void {
    return clock.setTimer(
      () => stopLeading("could not renew the lease within the renew deadline"),
      lastRenewAt + renewDeadlineMs - clock.now(),
    );
  }

  function startLeading(): void {
    const abort = new AbortController();
    let work: Promise<void>;
    try {
      work = Promise.resolve(options.onStartedLeading(abort.signal));
    } catch (error) {
      work = Promise.reject(error);
    }
    work = work.catch((error: unknown) =>
      logger.warn("leading work failed", { error: error instanceof Error ? error.message : String(error) }),
    );
    lastWork = work;
    heldLease = true;
    leading = { abort, work, cancelWatchdog: () => {} };
    leading.cancelWatchdog = armWatchdog();
    logger.info("started leading");
  }

  /** Leadership ends now: leading work is told to stop; resolves once it has. */
  function stopLeading(why: string): Promise<void> {
    const current = leading;
    if (!current) return Promise.resolve();
    leading = undefined;
    current.cancelWatchdog();
    current.abort.abort();
    logger.info("stopped leading", { reason: why });
    try {
      options.onStoppedLeading?.();
    } catch (error) {
      logger.warn("onStoppedLeading failed", {
        error: error instanceof Error ? error.message : String(error),
      });
    }
    return current.work;
  }

  async function release(): Promise<void> {
    try {
      const current = await store.get(options.namespace, options.name);
      if (!current || current.spec?.holderIdentity !== identity) return;
      const now = microTime(clock.now());
      await store.update({
        ...current,
        spec: {
          ...current.spec,
          holderIdentity: "",
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
        },
      });
      logger.debug("released the lease");
    } catch (error) {
      // Others take over once the lease expires.
      logger.warn("could not release the lease", {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  const retryDelay = () => retryPeriodMs * (1 + 0.2 * random());

  async function acquire(): Promise<boolean> {
    while (!stopping.signal.aborted) {
      const at = clock.now();
      const outcome = await tryAttempt();
      if (stopping.signal.aborted) {
        // Stopped mid-request; hand back a lease just taken.
        if (outcome === "held") await release();
        return false;
      }
      if (outcome === "held") {
        lastRenewAt = at;
        return true;
      }
      if (outcome !== "conflict") await clock.sleep(retryDelay(), stopping.signal);
    }
    return false;
  }

  async function renewWhileLeading(): Promise<void> {
    let delay = renewDeadlineMs / 2;
    while (leading && !stopping.signal.aborted) {
      await clock.sleep(delay, stopping.signal);
      if (!leading || stopping.signal.aborted) return;
      const at = clock.now();
      const outcome = await tryAttempt();
      if (!leading || stopping.signal.aborted) return;
      if (outcome === "held") {
        lastRenewAt = at;
        leading.cancelWatchdog();
        leading.cancelWatchdog = armWatchdog();
        delay = renewDeadlineMs / 2;
      } else if (outcome === "heldByOther") {
        await stopLeading("another holder has the lease");
      } else {
        // A conflict is retried at once with a fresh read; a failed request after a retry period.
        delay = outcome === "conflict" ? 0 : Math.min(retryPeriodMs, lastRenewAt + renewDeadlineMs - at);
      }
    }
  }

  async function run(): Promise<void> {
    while (!stopping.signal.aborted) {
      await lastWork;
      if (!(await acquire())) break;
      startLeading();
      await renewWhileLeading();
    }
    await stopLeading("stopping");
    await lastWork;
    if (heldLease) await release();
  }

  const elector: LeaderElector = {
    identity,
    start(signal) {
      if (running) throw new Error("leader elector already started");
      running = run();
      if (signal) {
        if (signal.aborted) void elector.stop();
        else signal.addEventListener("abort", () => void elector.stop(), { once: true });
      }
    },
    async stop() {
      stopping.abort();
      await running;
    },
    isLeader: () => leading !== undefined,
  };
  return elector;
}
