/**
 * Fault benchmark: how long a tenant's users wait when a component of its control plane dies —
 * from `kill -9` of its kube-apiserver (or etcd) until a request through the kube gateway as a
 * tenant admin succeeds again, healed by Ring0 alone (the tenant controller's watchdog finds the
 * exit, the reconciler starts the component again) — against a bare kwokctl cluster whose same
 * component is killed and started again at once by hand (once the process is gone, its pid file
 * removed, then `kwokctl start cluster`: no detection delay at all), until its admin request
 * succeeds, in the same run.
 *
 * Real parts throughout (see bench/provisioning/ring0-tenants.ts): a local super cluster, the
 * tenant controller with the local provisioner, PostgreSQL for the token, the gateway behind its
 * HTTPS listener. Writes bench/results/faults.json; never asserts on time.
 *
 *   npx tsx bench/faults.ts [rounds=3]
 */
import fs from "node:fs";
import path from "node:path";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { clearExitedPidFiles, waitExited } from "@/server/cluster/process";
import { load1, machine, ratio, say, sized, summary, writeResults } from "./lib/figures";
import { benchDir, cleanUpOnSignal, cleanupStack, exitWhenDone, finishBench, logger, sleep } from "./lib/run";
import { bareCluster } from "./provisioning/bare-clusters";
import { startRing0 } from "./provisioning/ring0-tenants";
import { type Subject, TIMEOUT_MS, timeToKubectl } from "./provisioning/subjects";

const rounds = Number(process.argv[2] ?? sized(3, 1));
const COMPONENTS = ["kube-apiserver", "etcd"] as const;

function kill(subject: Subject, component: string): number {
  const pid = Number(fs.readFileSync(path.join(subject.pidDir, `${component}.pid`), "utf8").trim());
  process.kill(pid, "SIGKILL");
  return pid;
}

/** Polls the subject's probe every 50 ms from `started` until it succeeds; ms taken. */
async function servingAgain(subject: Subject, started: number): Promise<number> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    if (await subject.probe().catch(() => false)) return performance.now() - started;
    if (Date.now() > deadline) throw new Error(`${subject.name}: not serving again in time`);
    await sleep(50);
  }
}

async function main() {
  const root = await benchDir("ring0-bench-faults-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  const results: Record<string, unknown> = { measuredAt: new Date().toISOString(), machine: machine() };
  let failed: unknown;
  try {
    const binDir = await kubeBinaries(logger, { build: false });
    const kubectlBinary = path.join(binDir, "kubectl");
    const ring0World = await startRing0(root, cleanup, binDir, kubectlBinary);
    const suffix = Date.now().toString(36).slice(-4);
    const tenant = await ring0World.tenant(`bf${suffix}`);
    const bare = await bareCluster(root, binDir, kubectlBinary, `bare${suffix}`);
    cleanup.push("remove the tenant", () => tenant.remove());
    cleanup.push("remove the bare cluster", () => bare.remove());
    await timeToKubectl(tenant, () => cleanup.throwIfStopping());
    await timeToKubectl(bare, () => cleanup.throwIfStopping());
    // Both idle a moment, so the first kill does not land on a control plane still settling.
    await sleep(5_000);

    const samples: Record<string, { ring0: number[]; bare: number[] }> = {};
    const load: number[] = [load1()];
    for (const component of COMPONENTS) {
      samples[component] = { ring0: [], bare: [] };
      for (let i = 0; i < rounds; i++) {
        cleanup.throwIfStopping();
        const order = i % 2 === 0 ? (["ring0", "bare"] as const) : (["bare", "ring0"] as const);
        for (const kind of order) {
          const subject = kind === "ring0" ? tenant : bare;
          const started = performance.now();
          const pid = kill(subject, component);
          if (kind === "bare") {
            // Once it has let go of its port; then as Ring0 does, since kwokctl's signal-0 check
            // takes an unreaped zombie for a running process.
            await waitExited([pid]);
            clearExitedPidFiles(path.dirname(subject.pidDir), [component]);
            await bare.restart?.();
          }
          const ms = await servingAgain(subject, started);
          samples[component]?.[kind].push(ms);
          say(`${component} killed, ${kind}: serving again after ${Math.round(ms)} ms`);
          // Let the watchdog see it serving (and the tenant turn Ready) before the next kill.
          await sleep(3_000);
        }
      }
      load.push(load1());
    }
    results.config = {
      rounds,
      ring0Measures:
        "kill -9 of the component → GET /api/v1/namespaces through the gateway as a tenant admin answers 200 (watchdog every 1 s, reconciler restarts the component)",
      baselineMeasures:
        "kill -9 of the same component of a bare kwokctl cluster → `kwokctl start cluster` at once → its admin GET answers 200",
    };
    results.load1 = load;
    results.healMs = Object.fromEntries(
      Object.entries(samples).map(([component, { ring0, bare: baseline }]) => {
        const ours = summary(ring0, 0);
        const theirs = summary(baseline, 0);
        return [
          component,
          {
            ring0: ours,
            bareRestartedAtOnce: theirs,
            ratioP50: ratio(ours.p50, theirs.p50),
            samples: { ring0: ring0.map(Math.round), bare: baseline.map(Math.round) },
          },
        ];
      }),
    );
  } catch (error) {
    failed = error;
  } finally {
    failed = await finishBench(cleanup, root, failed);
  }
  if (failed) throw failed;
  writeResults("faults", results);
  say(JSON.stringify(results.healMs));
}

exitWhenDone(main());
