/**
 * Noisy neighbour: tenant 0 creates many pods at once; once its backlog is building, the nine
 * quiet tenants create a few pods each. Their create → Running against the same quiet pods with no
 * noisy tenant (the per-tenant weighted fair queue at work).
 */
import { ratio } from "../lib/figures";
import { type BenchPods, firstTenants, type RunningWatches } from "./pods";
import { NOISY_PODS, QUIET_PODS, QUIET_START_AFTER, TENANTS } from "./sizes";
import type { SyncerWorld } from "./world";

/** The quiet tenants: every one but the noisy tenant 0. */
export const quietTenants = firstTenants(TENANTS).slice(1);

export async function measureNoisyNeighbour(world: SyncerWorld, watches: RunningWatches, pods: BenchPods) {
  // The quiet pods alone first.
  const quietCount = QUIET_PODS * quietTenants.length;
  const alone = await watches.launch(pods.viaSyncer("quiet-alone", quietCount, quietTenants)).done;
  await pods.remove();
  const noisy = watches.launch(pods.viaSyncer("noisy", NOISY_PODS, [0]));
  await noisy.created(QUIET_START_AFTER);
  const backlog = world.syncer.stats().queue[world.tenants[0] as string]?.depth ?? 0;
  const quiet = await watches.launch(pods.viaSyncer("quiet-noisy", quietCount, quietTenants)).done;
  const noisyOutcome = await noisy.done;
  return {
    quietAlone: alone,
    quietBesideNoisy: quiet,
    ratioP50: ratio(quiet.perPodMs.p50, alone.perPodMs.p50),
    ratioP99: ratio(quiet.perPodMs.p99, alone.perPodMs.p99),
    noisy: noisyOutcome,
    noisyQueueDepthWhenQuietStarted: backlog,
  };
}
