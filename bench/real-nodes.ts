/**
 * Real nodes (issue 16), each figure against a baseline measured in the same run, samples interleaved:
 *   1. a Deployment of N pods (toolbox, sleeping) created by the tenant admin through the kube
 *      gateway → all Running in the tenant, against the same Deployment created straight in the
 *      super cluster → all Running there (VirtualCluster's paper: 1.28× at 10k pods; goal ≤ 1.2×);
 *   2. `seq 1000000` through `kubectl exec` (gateway → tenant API server → vn-agent → kubelet)
 *      against the same exec with kubectl straight to the super cluster (API server → kubelet);
 *   3. a log burst (`kubectl logs` of a pod that printed 200,000 lines), the same two ways;
 *   4. the real node's idle RSS (kubelet + containerd, no pods) and its RSS per running pod.
 * Usage: tsx bench/real-nodes.ts [pods=30] [rounds=3]. Figures go to bench/results/real-nodes.json.
 * BENCH_SYNCER_WORKERS sets the syncer's workers (default 4, as Ring0's).
 */
import fs from "node:fs";
import https from "node:https";
import path from "node:path";
import { readDaemonPid } from "@/server/cluster/daemon";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { localSuperCluster } from "@/server/cluster/local";
import { processesMentioning } from "@/server/cluster/process";
import { KUBELET_PORT, realNodePlan, TOOLBOX_IMAGE } from "@/server/cluster/real-node/plan";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { superNamespace } from "@/server/syncer/naming";
import { kubectl } from "./lib/clients";
import { load1, machine, ratio, round, say, sized, summary, writeResults } from "./lib/figures";
import { rssKiB } from "./lib/memory";
import {
  benchDir,
  cleanUpOnSignal,
  cleanupStack,
  exitWhenDone,
  finishBench,
  logger,
  waitFor,
} from "./lib/run";
import { NAMESPACE, type RealNodesWorld, startRealNodesWorld } from "./real-nodes/world";

const PODS = Number(process.argv[2] ?? sized(30, 10));
const ROUNDS = Number(process.argv[3] ?? sized(3, 1));
const LOG_LINES = sized(200_000, 50_000);

const deployment = (name: string, replicas: number) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: "app", image: TOOLBOX_IMAGE, command: ["sleep", "3600"] }],
      },
    },
  },
});

async function runningCount(conn: ClusterConnection, namespace: string, app: string): Promise<number> {
  const list = await kubeRequest<{ items: { status?: { phase?: string } }[] }>(conn, {
    path: `/api/v1/namespaces/${namespace}/pods`,
    query: { labelSelector: `app=${app}` },
    timeoutMs: 30_000,
  });
  return list.items.filter((pod) => pod.status?.phase === "Running").length;
}

/**
 * Creates the Deployment through `conn` and resolves with the ms until all its pods run. With
 * `below` (Ring0's way), also when the copies below were all created and all Running.
 */
async function deploymentToRunning(
  conn: ClusterConnection,
  namespace: string,
  name: string,
  below?: { conn: ClusterConnection; namespace: string },
): Promise<{ ms: number; belowCreatedMs?: number; belowRunningMs?: number }> {
  const started = performance.now();
  await kubeRequest(conn, {
    method: "POST",
    path: `/apis/apps/v1/namespaces/${namespace}/deployments`,
    body: deployment(name, PODS),
  });
  let belowCreatedMs: number | undefined;
  let belowRunningMs: number | undefined;
  await waitFor(
    `${PODS} pods of ${name} Running`,
    async () => {
      if (below && belowRunningMs === undefined) {
        const list = await kubeRequest<{ items: { status?: { phase?: string } }[] }>(below.conn, {
          path: `/api/v1/namespaces/${below.namespace}/pods`,
          query: { labelSelector: `app=${name}` },
        });
        if (belowCreatedMs === undefined && list.items.length === PODS)
          belowCreatedMs = performance.now() - started;
        if (list.items.filter((pod) => pod.status?.phase === "Running").length === PODS)
          belowRunningMs = performance.now() - started;
      }
      return (await runningCount(conn, namespace, name)) === PODS;
    },
    {
      timeoutMs: 600_000,
      everyMs: 100,
    },
  );
  return { ms: performance.now() - started, belowCreatedMs, belowRunningMs };
}

/** Deletes the Deployment and waits until the real node runs none of its pods. */
async function removeDeployment(
  world: RealNodesWorld,
  conn: ClusterConnection,
  namespace: string,
  below: string,
  name: string,
) {
  await kubeRequest(conn, {
    method: "DELETE",
    path: `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`,
    query: { propagationPolicy: "Foreground" },
  });
  await waitFor(
    `${name}'s pods gone`,
    async () => {
      const list = await kubeRequest<{ items: unknown[] }>(world.superConn, {
        path: `/api/v1/namespaces/${below}/pods`,
        query: { labelSelector: `app=${name}` },
      });
      return list.items.length === 0;
    },
    { timeoutMs: 300_000, everyMs: 250 },
  );
}

async function timedKubectl(
  world: RealNodesWorld,
  kubeconfig: string,
  cache: string,
  args: string[],
): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  const result = await kubectl(world.kubectlPath, kubeconfig, cache, args);
  const ms = performance.now() - started;
  if (result.code !== 0) throw new Error(`kubectl ${args.join(" ")} failed: ${result.stderr.slice(0, 300)}`);
  return { ms, bytes: Buffer.byteLength(result.stdout) };
}

/**
 * Ms for Node to read the log straight from the kubelet (the vn-agent's own TLS client
 * certificate), counting bytes and doing nothing else.
 */
async function nodeReadsKubeletLog(world: RealNodesWorld, namespace: string): Promise<number> {
  const tls = await localSuperCluster({ stateDir: world.stateDir, logger }).kubeletClient();
  const plan = realNodePlan(world.stateDir, 0);
  const started = performance.now();
  const bytes = await new Promise<number>((resolve, reject) => {
    const request = https.get(
      {
        host: plan.nodeIp,
        port: KUBELET_PORT,
        path: `/containerLogs/${namespace}/streams/app`,
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        servername: plan.name,
        agent: false,
      },
      (response) => {
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
        });
        response.on("end", () => resolve(size));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
  });
  if (bytes < LOG_LINES) throw new Error(`the kubelet gave only ${bytes} bytes`);
  return performance.now() - started;
}

/** RSS (KiB) of the real node's kubelet and containerd, and of its pods' shims. */
function nodeMemory(world: RealNodesWorld) {
  const plan = realNodePlan(world.stateDir, 0);
  const kubelet = rssKiB(readDaemonPid(path.join(plan.dir, "kubelet.json")) ?? 0);
  const containerd = rssKiB(readDaemonPid(path.join(plan.dir, "containerd.json")) ?? 0);
  const shims = processesMentioning(plan.paths.containerdSocket).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("containerd-shim");
    } catch {
      return false;
    }
  });
  return {
    kubelet,
    containerd,
    shims: shims.reduce((sum, pid) => sum + rssKiB(pid), 0),
    shimCount: shims.length,
  };
}

async function main() {
  const root = await benchDir("ring0-bench-real-nodes-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  const began = performance.now();
  const elapsed = () => Math.round((performance.now() - began) / 1000);
  const results: Record<string, unknown> = {
    measuredAt: new Date().toISOString(),
    machine: machine(),
    pods: PODS,
    rounds: ROUNDS,
  };
  let failed: unknown;
  try {
    const binDir = await kubeBinaries(logger, { build: false });
    const world = await startRealNodesWorld(root, cleanup, binDir, elapsed);
    const below = superNamespace(world.tenant, NAMESPACE);
    const idle = nodeMemory(world);
    results.idleRssMiB = { kubelet: round(idle.kubelet / 1024), containerd: round(idle.containerd / 1024) };

    // 1. N pods to Running: through Ring0 against straight in the super cluster (its own namespace).
    await kubeRequest(world.superConn, {
      method: "POST",
      path: "/api/v1/namespaces",
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "bench-direct" } },
    });
    const samples = { ring0: [] as number[], direct: [] as number[] };
    const belowMs = { created: [] as number[], running: [] as number[] };
    for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex++) {
      const order = roundIndex % 2 === 0 ? (["direct", "ring0"] as const) : (["ring0", "direct"] as const);
      for (const way of order) {
        cleanup.throwIfStopping();
        const name = `d${roundIndex}-${way}`;
        if (way === "ring0") {
          const timed = await deploymentToRunning(world.tenantConn, NAMESPACE, name, {
            conn: world.superConn,
            namespace: below,
          });
          samples.ring0.push(timed.ms);
          if (timed.belowCreatedMs !== undefined) belowMs.created.push(timed.belowCreatedMs);
          if (timed.belowRunningMs !== undefined) belowMs.running.push(timed.belowRunningMs);
          if (roundIndex === 0) {
            const busy = nodeMemory(world);
            results.perPodRssMiB = round(busy.shims / 1024 / Math.max(1, busy.shimCount), 1);
            results.kubeletContainerdRssWithPodsMiB = round((busy.kubelet + busy.containerd) / 1024);
          }
          await removeDeployment(world, world.tenantConn, NAMESPACE, below, name);
        } else {
          samples.direct.push((await deploymentToRunning(world.superConn, "bench-direct", name)).ms);
          await removeDeployment(world, world.superConn, "bench-direct", "bench-direct", name);
        }
        say(
          `round ${roundIndex + 1} ${way}: ${round(((way === "ring0" ? samples.ring0 : samples.direct).at(-1) as number) / 1000, 2)} s`,
        );
      }
    }
    const ring0 = summary(samples.ring0);
    const direct = summary(samples.direct);
    results.podsToRunning = {
      ring0Ms: ring0,
      directMs: direct,
      ratio: ratio(ring0.p50, direct.p50),
      goal: "≤ 1.2",
      // Ring0's way, from the tenant's create: all copies created below, all Running below (then the
      // syncer copies the statuses up: the rest of ring0Ms).
      below: { allCreatedMs: summary(belowMs.created), allRunningMs: summary(belowMs.running) },
    };
    say(`${PODS} pods to Running: ${ratio(ring0.p50, direct.p50)}× direct (goal ≤ 1.2×)`);

    // 2 and 3. exec and logs: one pod, through Ring0 and straight to the super cluster.
    const cache = path.join(root, "kubectl-home", "cache");
    fs.mkdirSync(cache, { recursive: true });
    await kubeRequest(world.tenantConn, {
      method: "POST",
      path: `/api/v1/namespaces/${NAMESPACE}/pods`,
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "streams" },
        spec: {
          containers: [
            { name: "app", image: TOOLBOX_IMAGE, command: ["sh", "-c", `seq ${LOG_LINES}; exec sleep 3600`] },
          ],
        },
      },
    });
    await waitFor(
      "the streams pod Running",
      async () => {
        const pod = await kubeRequest<{ status?: { phase?: string } }>(world.tenantConn, {
          path: `/api/v1/namespaces/${NAMESPACE}/pods/streams`,
        });
        return pod.status?.phase === "Running";
      },
      { timeoutMs: 120_000 },
    );
    // "tenant": the tenant API server straight (its admin certificate, no gateway), to split Ring0's
    // overhead into the gateway's and the tenant API server + vn-agent's.
    const ways = {
      ring0: { kubeconfig: world.tenantKubeconfig, namespace: NAMESPACE },
      tenant: { kubeconfig: world.tenantAdminKubeconfig, namespace: NAMESPACE },
      direct: { kubeconfig: world.superKubeconfig, namespace: below },
    };
    const execMs = { ring0: [] as number[], tenant: [] as number[], direct: [] as number[] };
    const kubeletReadMs: number[] = [];
    const logMs = { ring0: [] as number[], tenant: [] as number[], direct: [] as number[] };
    for (let index = 0; index < ROUNDS * 2; index++) {
      const order =
        index % 2 === 0 ? (["direct", "tenant", "ring0"] as const) : (["ring0", "tenant", "direct"] as const);
      for (const way of order) {
        const { kubeconfig, namespace } = ways[way];
        const exec = await timedKubectl(world, kubeconfig, cache, [
          "-n",
          namespace,
          "exec",
          "streams",
          "--",
          "seq",
          "1000000",
        ]);
        if (exec.bytes !== 6_888_896)
          throw new Error(`exec ${way} gave ${exec.bytes} bytes, not seq 1000000's 6888896`);
        execMs[way].push(exec.ms);
        const logs = await timedKubectl(world, kubeconfig, cache, ["-n", namespace, "logs", "streams"]);
        if (logs.bytes < LOG_LINES) throw new Error(`logs ${way} gave only ${logs.bytes} bytes`);
        logMs[way].push(logs.ms);
      }
      kubeletReadMs.push(await nodeReadsKubeletLog(world, below));
    }
    const throughput = (samplesMs: { ring0: number[]; tenant: number[]; direct: number[] }) => {
      const r = summary(samplesMs.ring0);
      const t = summary(samplesMs.tenant);
      const d = summary(samplesMs.direct);
      // Throughput ratio: the same bytes, so direct time over Ring0 time.
      return {
        ring0Ms: r,
        directMs: d,
        throughputRatio: ratio(d.p50, r.p50),
        goal: "≥ 0.9",
        // Where Ring0's extra time goes (p50 differences, ms).
        breakdown: {
          tenantApiServerStraightMs: t,
          gatewayMs: round(r.p50 - t.p50),
          tenantApiServerAndVnAgentMs: round(t.p50 - d.p50),
        },
      };
    };
    results.execSeq1000000 = throughput(execMs);
    results.logBurst = {
      lines: LOG_LINES,
      ...throughput(logMs),
      // The floor of any relay in Node: reading the kubelet's answer and nothing else. The kubelet
      // flushes after every line, so it is one TLS record and one 'data' event per line.
      nodeReadsKubeletLogMs: summary(kubeletReadMs),
    };
    say(
      `exec seq 1000000: ${(results.execSeq1000000 as { throughputRatio: number }).throughputRatio}× direct throughput (goal ≥ 0.9)`,
    );
    say(
      `log burst of ${LOG_LINES} lines: ${(results.logBurst as { throughputRatio: number }).throughputRatio}× direct throughput (goal ≥ 0.9)`,
    );
    results.load1AtEnd = load1();
  } catch (error) {
    failed = error;
  }
  failed = await finishBench(cleanup, root, failed);
  if (!failed) writeResults("real-nodes", results);
  if (failed) throw failed;
}

exitWhenDone(main());
