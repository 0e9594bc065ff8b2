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
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { load1, machine, say, writeResults } from "./lib/figures";
import { benchDir, cleanUpOnSignal, cleanupStack, exitWhenDone, finishBench, logger } from "./lib/run";
import { measureNoisyNeighbour, quietTenants } from "./syncer/noisy-neighbour";
import { benchPods, firstTenants, runningWatches } from "./syncer/pods";
import { measurePodsToRunning } from "./syncer/pods-to-running";
import {
  CREATE_CONCURRENCY,
  DIRECT_LABEL,
  NODES,
  NOISY_PODS,
  PATROL_ROUNDS,
  QUIET_PODS,
  QUIET_START_AFTER,
  SYNCED_LABEL,
  TENANT_NAMESPACE,
  TENANTS,
} from "./syncer/sizes";
import { startSyncerWorld } from "./syncer/world";

async function main() {
  const root = await benchDir("ring0-bench-syncer-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  const benchStarted = performance.now();
  const results: Record<string, unknown> = {
    measuredAt: new Date().toISOString(),
    machine: machine(),
  };
  const machineLoad: Array<{ phase: string; load1: number }> = [];
  const noteLoad = (phase: string) => machineLoad.push({ phase, load1: load1() });
  let failed: unknown;
  try {
    const binDir = await kubeBinaries(logger, { build: false });
    const world = await startSyncerWorld({ root, binDir, cleanup, started: benchStarted, noteLoad });
    results.tenantControlPlanesUpMs = world.tenantControlPlanesUpMs;

    const watches = runningWatches(world.check);
    cleanup.push("bench watches", () => watches.stop());
    for (const [tenant, conn] of world.tenantConns) watches.watch(tenant, conn, SYNCED_LABEL);
    watches.watch("super", world.superConn, DIRECT_LABEL);
    const pods = benchPods(world);

    // Warm-up: super namespaces, vNodes, connections and code paths exist before anything is timed.
    await watches.launch(pods.viaSyncer("warm", TENANTS, firstTenants(TENANTS))).done;
    await watches.launch(pods.direct("warm", TENANTS, firstTenants(TENANTS))).done;
    await pods.remove();
    noteLoad("warmed up");

    const { podsToRunning, memory, patrol } = await measurePodsToRunning(world, watches, pods, noteLoad);
    results.podsToRunningMs = podsToRunning;
    results.memory = memory;
    results.patrol = patrol;

    results.noisyNeighbour = await measureNoisyNeighbour(world, watches, pods);
    noteLoad("noisy neighbour");
    say(`noisy neighbour: ${JSON.stringify(results.noisyNeighbour)}`);
    await pods.remove();

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

exitWhenDone(main());
