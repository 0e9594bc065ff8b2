/**
 * The syncer benchmark's pods: where each goes (a tenant control plane, through the syncer, or a
 * namespace of the super cluster directly), created with raw POSTs at a bounded concurrency, timed
 * from the POST to the watch event that shows it Running, and all removed between measures.
 */
import type { KubeObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { listAndWatch } from "@/server/k8s/watch";
import { superNamespace } from "@/server/syncer/naming";
import type { Syncer } from "@/server/syncer/syncer";
import { percentile, round } from "../lib/figures";
import { sleep, waitFor } from "../lib/run";
import {
  CREATE_CONCURRENCY,
  DIRECT_LABEL,
  RUNNING_TIMEOUT_MS,
  SYNCED_LABEL,
  TENANT_NAMESPACE,
} from "./sizes";
import type { SyncerWorld } from "./world";

/** Where one pod goes: a cluster (a tenant control plane or the super cluster) and a namespace. */
export interface PodPlan {
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

/**
 * Watches every cluster the bench creates pods in (bench-labelled pods only) and notes when each
 * awaited pod is first seen Running. Only timestamps are kept, never objects, so the bench's own
 * bookkeeping stays out of the syncer's memory figure. `check` runs as pods are created and awaited.
 */
export function runningWatches(check: () => void) {
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
          check();
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
          check();
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

export type RunningWatches = ReturnType<typeof runningWatches>;

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

export async function podCount(conn: ClusterConnection, labelSelector: string): Promise<number> {
  const list = await kubeRequest<{ items: unknown[] }>(conn, {
    path: "/api/v1/pods",
    query: { labelSelector },
    timeoutMs: 60_000,
  });
  return list.items.length;
}

/** Every key handled: no tenant has queued work, several looks in a row. */
export async function syncerIdle(syncer: Syncer, check: () => void): Promise<void> {
  let quietLooks = 0;
  await waitFor(
    "the syncer's queue draining",
    async () => {
      check();
      const busy = Object.values(syncer.stats().queue).some((queue) => queue.depth > 0);
      quietLooks = busy ? 0 : quietLooks + 1;
      return quietLooks >= 5;
    },
    { timeoutMs: RUNNING_TIMEOUT_MS, everyMs: 200 },
  );
}

/** The indices of the first `m` tenants (or their direct namespaces). */
export const firstTenants = (m: number) => Array.from({ length: m }, (_, index) => index);

/**
 * Plans for the world's pods, named `<prefix>-<round>-<i>` and spread over the given tenants (or
 * their namespaces below), and `remove()`, which ends a round.
 */
export function benchPods(world: SyncerWorld) {
  const { tenants, tenantConns, superConn, directNamespaces } = world;
  let serial = 0;
  return {
    viaSyncer: (prefix: string, count: number, tenantIndices: number[]): PodPlan[] =>
      Array.from({ length: count }, (_, i) => {
        const tenant = tenants[tenantIndices[i % tenantIndices.length] as number] as string;
        return {
          cluster: tenant,
          conn: tenantConns.get(tenant) as ClusterConnection,
          namespace: TENANT_NAMESPACE,
          name: `${prefix}-${serial}-${i}`,
          label: SYNCED_LABEL,
        };
      }),
    direct: (prefix: string, count: number, namespaceIndices: number[]): PodPlan[] =>
      Array.from({ length: count }, (_, i) => ({
        cluster: "super",
        conn: superConn,
        namespace: directNamespaces[namespaceIndices[i % namespaceIndices.length] as number] as string,
        name: `${prefix}-${serial}-${i}`,
        label: DIRECT_LABEL,
      })),
    /**
     * Every bench pod goes (grace 0: no kubelet finishes a graceful deletion) and the syncer is idle
     * again. Copies below are deleted along with their tenant pods, so tearing 1000 pods down does
     * not wait on the syncer deleting them one by one (it is not what this bench measures).
     */
    async remove() {
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
          world.check();
          return (
            (await podCount(superConn, `${SYNCED_LABEL}=true`)) === 0 &&
            (await podCount(superConn, `${DIRECT_LABEL}=true`)) === 0
          );
        },
        { timeoutMs: RUNNING_TIMEOUT_MS, everyMs: 500 },
      );
      await syncerIdle(world.syncer, world.check);
    },
  };
}

export type BenchPods = ReturnType<typeof benchPods>;
