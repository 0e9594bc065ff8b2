/**
 * Syncer benchmark: the VirtualCluster paper's measures (issue 5), all in one run so every ratio
 * compares figures taken under the same machine load:
 *   - N pods (N = 100, 1000) spread over M tenants (M = 1, 10) until Running as seen in the tenant
 *     control planes (through the syncer), against the same pods created directly in the super
 *     cluster until Running there; total time and per-pod create → Running (p50/p99);
 *   - noisy neighbour: one tenant creates 900 pods at once; once 300 of them exist, nine quiet
 *     tenants create 10 pods each; their per-pod create → Running (p50/p99) against the same quiet
 *     pods with no noisy tenant (the per-tenant weighted fair queue at work);
 *   - syncer memory per synced pod: heapUsed and RSS after a full GC, 1000 synced pods against none;
 *   - patroller time for 1000 synced pods (`syncer.patrol()`) against one plain list of those pods
 *     in the super cluster.
 *
 * Real parts throughout: a local super cluster (kwok nodes schedule and "run" pods; 12 nodes of 110
 * pods so 1000 fit), ten tenant control planes of the local provisioner with Tenant objects, and
 * the syncer as the runtime starts it (server/runtime/tenants.ts: default workers, patrol, heartbeat
 * and recheck intervals, the local world's super pod label). Pods are created with raw POSTs at a
 * bounded concurrency; Running is the arrival of the watch event that shows it. Everything is torn
 * down with removeLocalWorld, and nothing may outlive the run (checked in /proc). Writes
 * bench/results/syncer.json; never asserts on time.
 *
 *   npx tsx bench/syncer.ts
 */
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { localSuperCluster } from "@/server/cluster/local";
import { SIMULATED_POD_LABEL } from "@/server/cluster/simulated-pods";
import type { KubeObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { kubeRequest } from "@/server/k8s/transport";
import { listAndWatch } from "@/server/k8s/watch";
import { createLocalProvisioner } from "@/server/provisioners/local";
import type { ControlPlaneAccess } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import { removeLocalWorld } from "@/server/runtime/local-world";
import { syncLabels } from "@/server/syncer/contracts";
import { superNamespace } from "@/server/syncer/naming";
import { createSyncer, type Syncer } from "@/server/syncer/syncer";
import { createConnectionCache } from "@/server/tenants/connections";
import type { ControlPlaneDirectory } from "@/server/tenants/control-planes";
import { tenantApiVersion } from "@/server/tenants/tenant-resources";
import { percentile, ratio, round, say, sized, writeResults } from "./lib/figures";
import {
  benchDir,
  cleanUpOnSignal,
  cleanupStack,
  exitWhenDone,
  finishBench,
  logger,
  sleep,
  waitFor,
} from "./lib/run";
import { controlPlaneRunning } from "./lib/tenants";

const TENANTS = 10;
/** 12 kwok nodes × 110 pods: room for the 1000 pods (and the noisy run's 990) at once. */
const NODES = 12;
const CREATE_CONCURRENCY = 16;
const LARGE = sized(1000, 300);
const SIZES = [
  { pods: 100, tenants: 1 },
  { pods: 100, tenants: 10 },
  { pods: LARGE, tenants: 1 },
  { pods: LARGE, tenants: 10 },
] as const;
const NOISY_PODS = sized(900, 270);
const QUIET_PODS = 10;
/** The quiet tenants start once the noisy one has created this many pods (its backlog is building). */
const QUIET_START_AFTER = sized(300, 90);
const PATROL_ROUNDS = sized(5, 3);
const RUNNING_TIMEOUT_MS = 5 * 60_000;
/**
 * Tenant pods carry it (and so do their copies below: a domain outside ring0.dev, whose keys never go
 * down); pods created directly below carry the other.
 */
const SYNCED_LABEL = "bench.ring0.test/synced";
const DIRECT_LABEL = "bench.ring0.test/direct";
const TENANT_NAMESPACE = "default";

v8.setFlagsFromString("--expose-gc");
const gc = ((globalThis as { gc?: () => void }).gc ?? vm.runInNewContext("gc")) as () => void;

/** Set by main: throws once cleanup has started (a signal), so polling loops end. */
let stopCheck: () => void = () => {};

function stats(samples: number[]) {
  return {
    n: samples.length,
    p50: round(percentile(samples, 50), 0),
    p99: round(percentile(samples, 99), 0),
    max: round(Math.max(...samples), 0),
  };
}

/** Each running task takes the next item until none is left. */
async function mapLimit<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await task(items[next++] as T);
    }),
  );
}

/** Where one pod goes: a cluster (a tenant control plane or the super cluster) and a namespace. */
interface PodPlan {
  /** Which watch sees it Running: a tenant's name, or "super". */
  cluster: string;
  conn: ClusterConnection;
  namespace: string;
  name: string;
  label: string;
}

interface Sample {
  createdAt: number;
  runningAt?: number;
}

/**
 * Watches every cluster the bench creates pods in (bench-labelled pods only) and notes when each
 * awaited pod is first seen Running. Only timestamps are kept, never objects, so the bench's own
 * bookkeeping stays out of the syncer's memory figure.
 */
function runningWatches() {
  const awaited = new Map<string, Sample>();
  const stops: Array<() => void> = [];
  const seen = (
    cluster: string,
    pod: { metadata?: { namespace?: string; name?: string }; status?: { phase?: string } },
  ) => {
    if (pod.status?.phase !== "Running") return;
    const sample = awaited.get(`${cluster}|${pod.metadata?.namespace}|${pod.metadata?.name}`);
    if (!sample || sample.runningAt !== undefined) return;
    sample.runningAt = performance.now();
  };
  return {
    watch(cluster: string, conn: ClusterConnection, label: string) {
      type Pod = Parameters<typeof seen>[1];
      const watch = listAndWatch<Pod>(
        conn,
        { path: "/api/v1/pods", labelSelector: `${label}=true` },
        {
          onSync: (pods) => {
            for (const pod of pods) seen(cluster, pod);
          },
          onEvent: (type, pod) => {
            if (type !== "DELETED") seen(cluster, pod);
          },
        },
      );
      stops.push(() => watch.stop());
    },
    /** Creates the pods (CREATE_CONCURRENCY at a time); `created(n)` resolves once n POSTs answered. */
    launch(plans: PodPlan[]) {
      const samples = plans.map((plan) => {
        const sample: Sample = { createdAt: Number.NaN };
        awaited.set(`${plan.cluster}|${plan.namespace}|${plan.name}`, sample);
        return sample;
      });
      let createdCount = 0;
      const createdWaiters: Array<{ n: number; resolve: () => void }> = [];
      const creating = mapLimit(
        plans.map((plan, index) => ({ plan, sample: samples[index] as Sample })),
        CREATE_CONCURRENCY,
        async ({ plan, sample }) => {
          stopCheck();
          sample.createdAt = performance.now();
          await kubeRequest(plan.conn, {
            method: "POST",
            path: `/api/v1/namespaces/${plan.namespace}/pods`,
            body: benchPod(plan.name, plan.label),
            timeoutMs: 60_000,
          });
          createdCount++;
          for (const waiter of createdWaiters.filter((w) => createdCount >= w.n)) waiter.resolve();
        },
      );
      const done = (async () => {
        await creating;
        const deadline = Date.now() + RUNNING_TIMEOUT_MS;
        while (samples.some((sample) => sample.runningAt === undefined)) {
          stopCheck();
          if (Date.now() > deadline) {
            const missing = samples.filter((sample) => sample.runningAt === undefined).length;
            throw new Error(`${missing} of ${samples.length} pods not Running in time`);
          }
          // The times come from the watch handler; this loop only notices the end.
          await sleep(100);
        }
        for (const plan of plans) awaited.delete(`${plan.cluster}|${plan.namespace}|${plan.name}`);
        return outcome(samples);
      })();
      return {
        created: (n: number) =>
          n <= createdCount
            ? Promise.resolve()
            : new Promise<void>((resolve) => createdWaiters.push({ n, resolve })),
        done,
      };
    },
    stop() {
      for (const stop of stops.splice(0)) stop();
    },
  };
}

function outcome(samples: Sample[]) {
  const latencies = samples.map((sample) => (sample.runningAt as number) - sample.createdAt);
  const start = Math.min(...samples.map((sample) => sample.createdAt));
  const end = Math.max(...samples.map((sample) => sample.runningAt as number));
  return { totalMs: Math.round(end - start), perPodMs: stats(latencies) };
}

function benchPod(name: string, label: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { [label]: "true" } },
    spec: { containers: [{ name: "main", image: "nginx" }] },
  };
}

async function podCount(conn: ClusterConnection, labelSelector: string): Promise<number> {
  const list = await kubeRequest<{ items: unknown[] }>(conn, {
    path: "/api/v1/pods",
    query: { labelSelector },
    timeoutMs: 60_000,
  });
  return list.items.length;
}

/** Every key handled: no tenant has queued work, several looks in a row. */
async function syncerIdle(syncer: Syncer): Promise<void> {
  let quietLooks = 0;
  await waitFor(
    "the syncer's queue draining",
    async () => {
      stopCheck();
      const busy = Object.values(syncer.stats().queue).some((queue) => queue.depth > 0);
      quietLooks = busy ? 0 : quietLooks + 1;
      return quietLooks >= 5;
    },
    { timeoutMs: RUNNING_TIMEOUT_MS, everyMs: 200 },
  );
}

async function heapAfterGc() {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(50);
  }
  const usage = process.memoryUsage();
  return { heapUsed: usage.heapUsed, rss: usage.rss };
}

async function main() {
  const root = await benchDir("ring0-bench-syncer-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  stopCheck = () => cleanup.throwIfStopping();
  const benchStarted = performance.now();
  const results: Record<string, unknown> = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, memoryGiB: round(os.totalmem() / 2 ** 30) },
  };
  const machineLoad: Array<{ phase: string; load1: number }> = [];
  const noteLoad = (phase: string) => machineLoad.push({ phase, load1: round(os.loadavg()[0] ?? 0, 2) });
  let failed: unknown;
  try {
    const binDir = await kubeBinaries(logger, { build: false });
    // One state dir for the super cluster and the tenant control planes, as the runtime's local
    // world has it: removeLocalWorld takes both down.
    const world = path.join(root, "world");
    cleanup.push("local world", () => removeLocalWorld(world, logger));
    const superCluster = localSuperCluster({ stateDir: world, logger, binDir });
    await superCluster.up({ nodes: NODES });
    const superConn = superCluster.connect();
    await installCrds(superConn, logger);
    noteLoad("super cluster up");
    say(`super cluster up with ${NODES} nodes (${Math.round(performance.now() - benchStarted)} ms)`);

    // Ten tenants as the tenant controller makes them: a Tenant object, a running control plane.
    const provisioner = createLocalProvisioner({ stateDir: world, logger, binDir });
    const suffix = Date.now().toString(36).slice(-4);
    const tenants = Array.from({ length: TENANTS }, (_, index) => `sb${suffix}-${index}`);
    const version = availableVersions()[0] as string;
    for (const tenant of tenants) {
      await kubeRequest(superConn, {
        method: "POST",
        path: `/apis/${tenantApiVersion}/tenants`,
        body: { apiVersion: tenantApiVersion, kind: "Tenant", metadata: { name: tenant }, spec: {} },
      });
    }
    const tenantsStarted = performance.now();
    await Promise.all(tenants.map((tenant) => provisioner.ensure({ tenant, version, suspended: false })));
    const accesses = new Map<string, ControlPlaneAccess>();
    await Promise.all(
      tenants.map(async (tenant) => {
        const access = await controlPlaneRunning(provisioner, tenant, version, {
          timeoutMs: RUNNING_TIMEOUT_MS,
          everyMs: 500,
          check: stopCheck,
          log: say,
        });
        accesses.set(tenant, access);
      }),
    );
    const connections = createConnectionCache();
    const tenantConns = new Map(
      tenants.map((tenant) => [
        tenant,
        connections.connectionFor(tenant, accesses.get(tenant) as ControlPlaneAccess),
      ]),
    );
    // Pods are refused until the namespace's default service account exists.
    const serviceAccountIn = (conn: ClusterConnection, namespace: string) =>
      waitFor(
        `the default service account in ${namespace}`,
        async () => {
          await kubeRequest(conn, { path: `/api/v1/namespaces/${namespace}/serviceaccounts/default` });
          return true;
        },
        { timeoutMs: 120_000, everyMs: 500 },
      );
    await Promise.all([...tenantConns.values()].map((conn) => serviceAccountIn(conn, TENANT_NAMESPACE)));
    results.tenantControlPlanesUpMs = Math.round(performance.now() - tenantsStarted);
    noteLoad("tenant control planes up");
    say(`${TENANTS} tenant control planes up (${results.tenantControlPlanesUpMs} ms)`);

    // The baseline's namespaces below, one per tenant it stands in for.
    const directNamespaces = tenants.map((_, index) => `bench-direct-${index}`);
    for (const namespace of directNamespaces) {
      await kubeRequest(superConn, {
        method: "POST",
        path: "/api/v1/namespaces",
        body: { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
      });
    }
    await Promise.all(directNamespaces.map((namespace) => serviceAccountIn(superConn, namespace)));

    // The syncer as server/runtime/tenants.ts starts it; the directory answers with admin access
    // (the runtime's reads the same access through the Tenant's status).
    const directory: ControlPlaneDirectory = {
      async lookup(tenant) {
        const access = accesses.get(tenant);
        return access ? { state: "ready", access } : { state: "absent" };
      },
    };
    const syncer = createSyncer({
      superCluster: superConn,
      directory,
      logger,
      superPodLabels: { [SIMULATED_POD_LABEL]: "true" },
    });
    cleanup.push("syncer stop", () => syncer.stop());
    await syncer.start();
    await waitFor(
      "every tenant syncing",
      async () => {
        stopCheck();
        const states = syncer.stats().tenants;
        return tenants.every((tenant) => states[tenant]?.state === "syncing");
      },
      { timeoutMs: 120_000, everyMs: 200 },
    );

    const watches = runningWatches();
    cleanup.push("bench watches", () => watches.stop());
    for (const [tenant, conn] of tenantConns) watches.watch(tenant, conn, SYNCED_LABEL);
    watches.watch("super", superConn, DIRECT_LABEL);

    let serial = 0;
    const viaSyncer = (prefix: string, count: number, tenantIndices: number[]): PodPlan[] =>
      Array.from({ length: count }, (_, i) => {
        const tenant = tenants[tenantIndices[i % tenantIndices.length] as number] as string;
        return {
          cluster: tenant,
          conn: tenantConns.get(tenant) as ClusterConnection,
          namespace: TENANT_NAMESPACE,
          name: `${prefix}-${serial}-${i}`,
          label: SYNCED_LABEL,
        };
      });
    const direct = (prefix: string, count: number, namespaceIndices: number[]): PodPlan[] =>
      Array.from({ length: count }, (_, i) => ({
        cluster: "super",
        conn: superConn,
        namespace: directNamespaces[namespaceIndices[i % namespaceIndices.length] as number] as string,
        name: `${prefix}-${serial}-${i}`,
        label: DIRECT_LABEL,
      }));
    const firstTenants = (m: number) => Array.from({ length: m }, (_, index) => index);

    /**
     * Every bench pod goes (grace 0: no kubelet finishes a graceful deletion) and the syncer is idle
     * again. Copies below are deleted along with their tenant pods, so tearing 1000 pods down does
     * not wait on the syncer deleting them one by one (it is not what this bench measures).
     */
    const removeBenchPods = async () => {
      serial++;
      const deleteAll = (conn: ClusterConnection, namespace: string, label: string) =>
        kubeRequest(conn, {
          method: "DELETE",
          path: `/api/v1/namespaces/${namespace}/pods`,
          query: { labelSelector: `${label}=true`, gracePeriodSeconds: "0" },
          timeoutMs: 120_000,
        });
      await Promise.all([
        ...[...tenantConns].flatMap(([tenant, conn]) => [
          deleteAll(conn, TENANT_NAMESPACE, SYNCED_LABEL),
          deleteAll(superConn, superNamespace(tenant, TENANT_NAMESPACE), SYNCED_LABEL),
        ]),
        ...directNamespaces.map((namespace) => deleteAll(superConn, namespace, DIRECT_LABEL)),
      ]);
      await waitFor(
        "bench pods gone from the super cluster",
        async () => {
          stopCheck();
          return (
            (await podCount(superConn, `${SYNCED_LABEL}=true`)) === 0 &&
            (await podCount(superConn, `${DIRECT_LABEL}=true`)) === 0
          );
        },
        { timeoutMs: RUNNING_TIMEOUT_MS, everyMs: 500 },
      );
      await syncerIdle(syncer);
    };

    // Warm-up: super namespaces, vNodes, connections and code paths exist before anything is timed.
    await watches.launch(viaSyncer("warm", TENANTS, firstTenants(TENANTS))).done;
    await watches.launch(direct("warm", TENANTS, firstTenants(TENANTS))).done;
    await removeBenchPods();
    noteLoad("warmed up");

    const podsToRunning: Record<string, unknown> = {};
    const memory: Record<string, unknown> = {};
    const patrol: Record<string, unknown> = {};
    for (const { pods, tenants: m } of SIZES) {
      const key = `${pods}podsX${m}tenants`;
      const baseline = await watches.launch(direct(`d${pods}x${m}`, pods, firstTenants(m))).done;
      await removeBenchPods();
      const before = await heapAfterGc();
      const synced = await watches.launch(viaSyncer(`s${pods}x${m}`, pods, firstTenants(m))).done;
      noteLoad(key);
      podsToRunning[key] = {
        viaSyncer: synced,
        direct: baseline,
        ratioTotal: ratio(synced.totalMs, baseline.totalMs),
        ratioP50: ratio(synced.perPodMs.p50, baseline.perPodMs.p50),
        ratioP99: ratio(synced.perPodMs.p99, baseline.perPodMs.p99),
      };
      say(`${key}: ${JSON.stringify(podsToRunning[key])}`);
      if (pods === 1000) {
        await syncerIdle(syncer);
        const after = await heapAfterGc();
        memory[key] = {
          syncedPods: pods,
          heapUsedDeltaMiB: round((after.heapUsed - before.heapUsed) / 2 ** 20),
          rssDeltaMiB: round((after.rss - before.rss) / 2 ** 20),
          heapBytesPerPod: Math.round((after.heapUsed - before.heapUsed) / pods),
          rssBytesPerPod: Math.round((after.rss - before.rss) / pods),
        };
        say(`memory ${key}: ${JSON.stringify(memory[key])}`);
        patrol[key] = await timePatrol(syncer, superConn, tenants.slice(0, m));
        say(`patrol ${key}: ${JSON.stringify(patrol[key])}`);
      }
      await removeBenchPods();
    }
    results.podsToRunningMs = podsToRunning;
    results.memory = memory;
    results.patrol = patrol;

    // Noisy neighbour: tenant 0 is noisy, tenants 1–9 are quiet; the quiet pods alone first.
    const quietTenants = firstTenants(TENANTS).slice(1);
    const quietCount = QUIET_PODS * quietTenants.length;
    const alone = await watches.launch(viaSyncer("quiet-alone", quietCount, quietTenants)).done;
    await removeBenchPods();
    const noisy = watches.launch(viaSyncer("noisy", NOISY_PODS, [0]));
    await noisy.created(QUIET_START_AFTER);
    const backlog = syncer.stats().queue[tenants[0] as string]?.depth ?? 0;
    const quiet = await watches.launch(viaSyncer("quiet-noisy", quietCount, quietTenants)).done;
    const noisyOutcome = await noisy.done;
    noteLoad("noisy neighbour");
    results.noisyNeighbour = {
      quietAlone: alone,
      quietBesideNoisy: quiet,
      ratioP50: ratio(quiet.perPodMs.p50, alone.perPodMs.p50),
      ratioP99: ratio(quiet.perPodMs.p99, alone.perPodMs.p99),
      noisy: noisyOutcome,
      noisyQueueDepthWhenQuietStarted: backlog,
    };
    say(`noisy neighbour: ${JSON.stringify(results.noisyNeighbour)}`);
    await removeBenchPods();

    results.config = {
      tenants: TENANTS,
      superNodes: `${NODES} kwok nodes, 110 pods each`,
      createConcurrency: CREATE_CONCURRENCY,
      syncer:
        "createSyncer as server/runtime/tenants.ts starts it: default workers (4), patrol 60 s, heartbeat 10 s, tenant recheck 5 s; super pods labelled for kwok exec",
      viaSyncerMeasures: `POST the pod to a tenant control plane (namespace ${TENANT_NAMESPACE}) → its watch shows it Running`,
      directMeasures:
        "POST the same pod to the super cluster (one namespace per tenant) → its watch shows it Running",
      noisyNeighbour: `${NOISY_PODS} pods in one tenant; after ${QUIET_START_AFTER} of them were created, ${QUIET_PODS} pods in each of ${quietTenants.length} quiet tenants`,
      memory:
        "process heapUsed / RSS after a full GC with the syncer idle: 1000 synced pods (Running, events copied up) minus none, divided by 1000",
      patrol: `syncer.patrol() (every served tenant, every kind) with the 1000 pods synced, ${PATROL_ROUNDS} rounds; baseline: one GET of those pods below`,
    };
    results.machineLoad = machineLoad;
  } catch (error) {
    failed = error;
  } finally {
    failed = await finishBench(cleanup, root, failed);
  }
  if (failed) throw failed;
  results.benchRuntimeS = Math.round((performance.now() - benchStarted) / 1000);
  writeResults("syncer", results);
  say(`done in ${results.benchRuntimeS} s`);
}

/** `syncer.patrol()` against one plain list of the synced pods below, interleaved. */
async function timePatrol(syncer: Syncer, superConn: ClusterConnection, tenants: string[]) {
  const checkedPods = () =>
    tenants.reduce((sum, tenant) => sum + (syncer.stats().patrol[tenant]?.pod?.checked ?? 0), 0);
  const patrolMs: number[] = [];
  const listMs: number[] = [];
  const checkedBefore = checkedPods();
  for (let i = 0; i < PATROL_ROUNDS; i++) {
    stopCheck();
    let started = performance.now();
    await syncer.patrol();
    patrolMs.push(performance.now() - started);
    started = performance.now();
    const listed = await podCount(superConn, `${SYNCED_LABEL}=true,${syncLabels.managed}=true`);
    listMs.push(performance.now() - started);
    if (listed === 0) throw new Error("no synced pods to patrol");
  }
  const patrolStats = { p50: round(percentile(patrolMs, 50), 1), max: round(Math.max(...patrolMs), 1) };
  const listStats = { p50: round(percentile(listMs, 50), 1), max: round(Math.max(...listMs), 1) };
  return {
    patrolMs: patrolStats,
    listSyncedPodsBelowMs: listStats,
    ratioP50: ratio(patrolStats.p50, listStats.p50),
    podsCheckedPerPatrol: Math.round((checkedPods() - checkedBefore) / PATROL_ROUNDS),
  };
}

exitWhenDone(main());
