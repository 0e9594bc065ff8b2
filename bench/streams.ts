/**
 * Browser streams benchmark (issue 6), all in one run so every ratio compares figures taken under
 * the same machine load:
 *   1. log throughput: a pod writes 200k lines (~25 MB) to its log as fast as it can; lines/s, MB/s
 *      and completeness through Ring0's /ws/logs into a headless `ws` client, against
 *      `kubectl logs -f` on the same pod (rounds interleaved);
 *   2. `seq 1000000` through Ring0's /ws/exec (typed into a shell, lines counted until the exit
 *      frame), against `kubectl exec <pod> -- seq 1000000`: completeness and time;
 *   3. keystroke echo: one byte sent → its echo received, p50/p99, through Ring0's /ws/exec against
 *      a WebSocket exec (v5.channel.k8s.io) straight to the tenant's API server with its admin
 *      credentials, samples interleaved; the added milliseconds;
 *   4. server memory with 200 log streams and 50 shells held open (BENCH_STREAMS_HOLD_SECONDS,
 *      default 300) while the pods keep logging and the shells keep echoing: RSS and heapUsed after
 *      a full GC every 10 s, first/last/max, the slope, and whether the last sample is within a
 *      small margin of the early plateau; the idle server before as the baseline.
 *
 * Real parts throughout: a local super cluster in a temp state dir (kwok nodes, the kwok debug
 * binder serving the pods' logs and shells), a vn-agent per node, one tenant control plane of the
 * local provisioner with a Tenant object and the tenant defaults, the syncer, embedded PostgreSQL
 * with migrations (API tokens, exec session records, audit), and Ring0's stream server in this
 * process as the runtime wires it (createUpgradeHandler + authenticateStream + the logs and exec
 * endpoints + a registry; caps raised to 1000 for the hold) on 127.0.0.1. Ring0's streams are
 * opened with a tenant admin's API token (Bearer); they go Ring0 → tenant API server (as the user)
 * → vn-agent → kwok. The kubectl baselines use the tenant control plane directly with its admin
 * kubeconfig (the same API server → vn-agent → kwok path, without Ring0). Every client (the `ws`
 * clients, kubectl, the log writer) runs in a child process of this script, so the server's
 * process measures only the server. Everything is torn down with removeLocalWorld, and nothing may
 * outlive the run (checked in /proc). Writes bench/results/streams.json; never asserts on time,
 * only that every stream delivered everything.
 *
 *   NODE_OPTIONS=--expose-gc npx tsx bench/streams.ts     (npm run bench:streams)
 */
import fs from "node:fs";
import path from "node:path";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { kubeconfigFromAccess } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import { load1, machine, say, writeResults } from "./lib/figures";
import { benchDir, cleanUpOnSignal, cleanupStack, exitWhenDone, finishBench, logger } from "./lib/run";
import { directExec, type KubectlTarget } from "./streams/baselines";
import { clientMain, startClientProcess } from "./streams/client";
import { measureExecSeq } from "./streams/exec-seq";
import { closedEarly, measureMemoryHeld } from "./streams/held-streams";
import { measureKeystrokeEcho } from "./streams/keystroke-echo";
import { measureLogThroughput } from "./streams/log-throughput";
import { startStreamServer } from "./streams/server";
import {
  ECHO_SAMPLES,
  HOLD_LOG_STREAMS,
  HOLD_SECONDS,
  HOLD_SHELLS,
  LOG_LINES,
  NAMESPACE,
  ROUNDS,
  SEQ_COUNT,
} from "./streams/sizes";
import { startStreamsWorld } from "./streams/world";

async function main() {
  const root = await benchDir("ring0-bench-streams-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  const benchStarted = performance.now();
  const elapsed = () => Math.round((performance.now() - benchStarted) / 1000);
  const results: Record<string, unknown> = {
    measuredAt: new Date().toISOString(),
    machine: { ...machine(), load1AtStart: load1() },
  };
  let failed: unknown;
  try {
    const binDir = await kubeBinaries(logger, { build: false });
    const world = await startStreamsWorld(root, cleanup, binDir, elapsed);
    const [pod, logFile] = [world.pods[0] as string, world.logFiles[0] as string];
    const server = await startStreamServer(world, cleanup);
    const direct = directExec(world.tenantAccess, NAMESPACE, pod);
    const kubeconfig = path.join(root, "tenant-admin.kubeconfig");
    fs.writeFileSync(kubeconfig, kubeconfigFromAccess(world.tenantAccess, world.tenant), { mode: 0o600 });
    const kubectl: KubectlTarget = {
      binary: path.join(binDir, "kubectl"),
      kubeconfig,
      cacheDir: path.join(root, "kubectl", "cache"),
      pod,
    };

    const client = startClientProcess(root);
    cleanup.push("client process", () => client.stop());

    // 1. Log throughput.
    const logs = await measureLogThroughput({
      client,
      cleanup,
      ring0: { url: server.logsUrl(pod, 1), headers: server.headers },
      kubectl,
      logFile,
    });
    results.logThroughput = logs;

    // 2. seq 1000000 through exec.
    const seq = await measureExecSeq({
      client,
      cleanup,
      ring0: { url: server.shellUrl(pod), headers: server.headers },
      direct,
      kubectl,
    });
    results.execSeq = seq;

    // 3. Keystroke echo.
    results.keystrokeEchoMs = await measureKeystrokeEcho(
      client,
      { url: server.shellUrl(pod), headers: server.headers },
      direct,
    );

    // 4. Memory with 200 log streams and 50 shells held open.
    const held = await measureMemoryHeld({ client, cleanup, world, server, elapsed });
    results.memoryHeld = held;

    results.baselines = {
      logs: "`kubectl logs -f --tail=1 <pod>` against the tenant control plane directly (admin kubeconfig), not through the kube gateway",
      exec: "`kubectl exec <pod> -- seq 1000000` against the tenant control plane directly (admin kubeconfig)",
      echo: "a WebSocket exec (v5.channel.k8s.io, tty, sh) straight to the tenant API server with its admin client certificate",
      ring0:
        "Ring0's /ws/logs and /ws/exec in this process with a tenant admin's API token (Bearer): Ring0 → tenant API server as the user → vn-agent → kwok",
    };
    results.config = {
      rounds: ROUNDS,
      logLines: LOG_LINES,
      seqCount: SEQ_COUNT,
      echoSamples: ECHO_SAMPLES,
      holdLogStreams: HOLD_LOG_STREAMS,
      holdShells: HOLD_SHELLS,
      holdSeconds: HOLD_SECONDS,
      streamBufferBytes: server.settings.bufferBytes,
      version: availableVersions()[0],
    };
    const incomplete = [
      ...(logs.ring0.complete && logs.kubectlLogsF.complete ? [] : ["a log stream missed lines"]),
      ...(seq.ring0.complete && seq.kubectlExec.complete && seq.directTtyShell.complete
        ? []
        : ["a seq run missed lines"]),
      ...(closedEarly(held)
        ? [`held streams closed early: ${held.streamsHealthy.unexpectedCloses.slice(0, 3).join("; ")}`]
        : []),
    ];
    if (incomplete.length > 0) failed = new Error(`incomplete: ${incomplete.join(", ")}`);
  } catch (error) {
    failed = error;
  } finally {
    results.runtimeSeconds = elapsed();
    failed = await finishBench(cleanup, root, failed);
  }
  say(`bench ran ${elapsed()} s`);
  if (failed) {
    say(`partial figures: ${JSON.stringify(results)}`);
    throw failed;
  }
  writeResults("streams", results);
}

if (process.argv[2] === "client") clientMain();
else exitWhenDone(main());
