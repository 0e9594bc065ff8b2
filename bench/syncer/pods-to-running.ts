/**
 * N pods over M tenants until Running as seen in the tenant control planes (through the syncer),
 * against the same pods created directly in the super cluster; at 1000 pods also the syncer's
 * memory per synced pod (after a full GC, against none) and the patroller's time against one plain
 * list of those pods below.
 */
import type { ClusterConnection } from "@/server/k8s/cluster";
import { syncLabels } from "@/server/syncer/contracts";
import type { Syncer } from "@/server/syncer/syncer";
import { percentile, ratio, round, say } from "../lib/figures";
import { memoryAfterGc } from "../lib/memory";
import { type BenchPods, firstTenants, podCount, type RunningWatches, syncerIdle } from "./pods";
import { PATROL_ROUNDS, SIZES, SYNCED_LABEL } from "./sizes";
import type { SyncerWorld } from "./world";

export async function measurePodsToRunning(
  world: SyncerWorld,
  watches: RunningWatches,
  pods: BenchPods,
  noteLoad: (phase: string) => void,
) {
  const podsToRunning: Record<string, unknown> = {};
  const memory: Record<string, unknown> = {};
  const patrol: Record<string, unknown> = {};
  for (const { pods: count, tenants: m } of SIZES) {
    const key = `${count}podsX${m}tenants`;
    const baseline = await watches.launch(pods.direct(`d${count}x${m}`, count, firstTenants(m))).done;
    await pods.remove();
    const before = await memoryAfterGc();
    const synced = await watches.launch(pods.viaSyncer(`s${count}x${m}`, count, firstTenants(m))).done;
    noteLoad(key);
    podsToRunning[key] = {
      viaSyncer: synced,
      direct: baseline,
      ratioTotal: ratio(synced.totalMs, baseline.totalMs),
      ratioP50: ratio(synced.perPodMs.p50, baseline.perPodMs.p50),
      ratioP99: ratio(synced.perPodMs.p99, baseline.perPodMs.p99),
    };
    say(`${key}: ${JSON.stringify(podsToRunning[key])}`);
    if (count === 1000) {
      await syncerIdle(world.syncer, world.check);
      const after = await memoryAfterGc();
      memory[key] = {
        syncedPods: count,
        heapUsedDeltaMiB: round((after.heapUsed - before.heapUsed) / 2 ** 20),
        rssDeltaMiB: round((after.rss - before.rss) / 2 ** 20),
        heapBytesPerPod: Math.round((after.heapUsed - before.heapUsed) / count),
        rssBytesPerPod: Math.round((after.rss - before.rss) / count),
      };
      say(`memory ${key}: ${JSON.stringify(memory[key])}`);
      patrol[key] = await timePatrol(world.syncer, world.superConn, world.tenants.slice(0, m), world.check);
      say(`patrol ${key}: ${JSON.stringify(patrol[key])}`);
    }
    await pods.remove();
  }
  return { podsToRunning, memory, patrol };
}

/** `syncer.patrol()` against one plain list of the synced pods below, interleaved. */
async function timePatrol(
  syncer: Syncer,
  superConn: ClusterConnection,
  tenants: string[],
  check: () => void,
) {
  const checkedPods = () =>
    tenants.reduce((sum, tenant) => sum + (syncer.stats().patrol[tenant]?.pod?.checked ?? 0), 0);
  const patrolMs: number[] = [];
  const listMs: number[] = [];
  const checkedBefore = checkedPods();
  for (let i = 0; i < PATROL_ROUNDS; i++) {
    check();
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
