/**
 * Provisioning benchmark: how long a tenant waits for its control plane, end to end —
 * from creating a `Tenant` object in the super cluster to `kubectl get ns` succeeding through the
 * kube gateway as a tenant user with a Ring0 API token — for 1 tenant and for 5 at once (p50/p95),
 * against bare `kwokctl create cluster` (same binaries, same components: etcd, kube-apiserver,
 * kube-controller-manager; `--disable kube-scheduler,kwok-controller`) until `kubectl get ns`
 * succeeds with its admin kubeconfig, at the same concurrency, in the same run. Also the memory of
 * an idle tenant control plane (its etcd + kube-apiserver + kube-controller-manager after ~20 s
 * idle, five at once: resident, proportional and anonymous, from smaps_rollup) against five idle
 * bare clusters (Go's default GOGC, where Ring0 runs its control planes with RING0_CONTROL_PLANE_GOGC).
 *
 * Real parts throughout: a local super cluster in a temp state dir, the Tenant CRD, the tenant
 * controller (startTenantController, runtime defaults) with the local provisioner, embedded
 * PostgreSQL with migrations for the tokens, the gateway behind its HTTPS listener with Ring0's
 * own CA, the control plane directory over the Tenant informer, and tools/kube's kubectl.
 * Tenants are deleted through the controller; every process started is gone at the end (checked
 * in /proc). Writes bench/results/provisioning.json; never asserts on time.
 *
 *   npx tsx bench/provisioning.ts [rounds-of-1=3] [idle-seconds=20]
 */
import path from "node:path";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { load1, machine, ratio, say, sized, summary, writeResults } from "./lib/figures";
import { benchDir, cleanUpOnSignal, cleanupStack, exitWhenDone, finishBench, logger, sleep } from "./lib/run";
import { bareCluster } from "./provisioning/bare-clusters";
import { startRing0 } from "./provisioning/ring0-tenants";
import { controlPlaneMemory, type Subject, timeToKubectl } from "./provisioning/subjects";

const roundsOfOne = Number(process.argv[2] ?? sized(3, 2));
const idleSeconds = Number(process.argv[3] ?? sized(20, 10));
const CONCURRENT = 5;

async function main() {
  const root = await benchDir("ring0-bench-prov-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  const stopCheck = () => cleanup.throwIfStopping();
  const results: Record<string, unknown> = {
    measuredAt: new Date().toISOString(),
    machine: machine(),
  };
  let failed: unknown;
  try {
    const binDir = await kubeBinaries(logger, { build: false });
    const kubectlBinary = path.join(binDir, "kubectl");
    const ring0World = await startRing0(root, cleanup, binDir, kubectlBinary);

    const suffix = Date.now().toString(36).slice(-4);
    let serial = 0;
    const ring0Tenant = () => ring0World.tenant(`bp${suffix}-${serial++}`);
    const bareKwokctl = () => bareCluster(root, binDir, kubectlBinary, `bare${suffix}-${serial++}`);

    /** 1-minute load average before and after each batch: this machine is shared; read ratios with it. */
    const machineLoad: Array<{ batch: string; load1: number[] }> = [];
    /** `count` control planes at once; times each, optionally measures idle memory, removes them. */
    const batch = async (make: () => Promise<Subject>, count: number, measureMemory: boolean) => {
      cleanup.throwIfStopping();
      const load = [load1()];
      const subjects = await Promise.all(Array.from({ length: count }, make));
      let removed = false;
      const removeAll = async () => {
        if (removed) return;
        removed = true;
        const started = performance.now();
        await Promise.all(subjects.map((subject) => subject.remove()));
        return performance.now() - started;
      };
      cleanup.push(`remove ${subjects.map((subject) => subject.name).join(", ")}`, removeAll);
      const times = await Promise.all(subjects.map((subject) => timeToKubectl(subject, stopCheck)));
      const phases = await Promise.all(subjects.map((subject) => subject.phases?.()));
      load.push(load1());
      machineLoad.push({
        batch: `${count} × ${subjects[0]?.name.startsWith("bare") ? "bare" : "ring0"}`,
        load1: load,
      });
      let memory: ReturnType<typeof controlPlaneMemory> | undefined;
      if (measureMemory) {
        await sleep(idleSeconds * 1000);
        memory = controlPlaneMemory(subjects);
      }
      const removeMs = await removeAll();
      return { times, memory, phases, removeMs: removeMs ?? 0 };
    };

    const samples = {
      ring0: { 1: [] as number[], 5: [] as number[] },
      bare: { 1: [] as number[], 5: [] as number[] },
    };
    const removal = { ring0: [] as number[], bare: [] as number[] };
    const tenantPhases: Array<Record<string, number> | undefined> = [];
    results.machineLoad = machineLoad;
    for (let i = 0; i < roundsOfOne; i++) {
      // Alternate which goes first so a trend in the machine's load does not favour either.
      const order = i % 2 === 0 ? (["bare", "ring0"] as const) : (["ring0", "bare"] as const);
      for (const kind of order) {
        const outcome = await batch(kind === "ring0" ? ring0Tenant : bareKwokctl, 1, false);
        samples[kind][1].push(...outcome.times);
        removal[kind].push(outcome.removeMs);
        tenantPhases.push(...outcome.phases.filter(Boolean));
        say(`1 at once, ${kind}: ${Math.round(outcome.times[0] ?? 0)} ms`);
      }
    }
    const bareFive = await batch(bareKwokctl, CONCURRENT, true);
    samples.bare[5].push(...bareFive.times);
    removal.bare.push(bareFive.removeMs);
    say(`${CONCURRENT} at once, bare: ${bareFive.times.map(Math.round).join(", ")} ms`);
    const ringFive = await batch(ring0Tenant, CONCURRENT, true);
    samples.ring0[5].push(...ringFive.times);
    removal.ring0.push(ringFive.removeMs);
    tenantPhases.push(...ringFive.phases);
    say(`${CONCURRENT} at once, ring0: ${ringFive.times.map(Math.round).join(", ")} ms`);

    const level = (n: 1 | 5) => {
      const ring0 = summary(samples.ring0[n], 0);
      const bare = summary(samples.bare[n], 0);
      return {
        ring0,
        bareKwokctl: bare,
        ratioP50: ratio(ring0.p50, bare.p50),
        ratioP95: ratio(ring0.p95, bare.p95),
      };
    };
    results.config = {
      roundsOfOne,
      concurrent: CONCURRENT,
      idleSeconds,
      controller: "startTenantController with runtime defaults (4 workers, 1 s poll), local provisioner",
      gateway:
        "createKubeGateway + startGatewayListener (HTTPS, Ring0's own CA) in this process, real token verification",
      ring0Measures:
        "create Tenant {spec: {}} → kubectl get ns through the gateway with a tenant admin's API token",
      baselineMeasures:
        "kwokctl create cluster --runtime binary --disable kube-scheduler,kwok-controller → kubectl get ns (admin kubeconfig)",
    };
    results.provisioningMs = { oneTenant: level(1), [`${CONCURRENT}Concurrent`]: level(5) };
    results.idleMemoryMiB = {
      ring0Tenant: ringFive.memory,
      bareKwokctl: bareFive.memory,
      ratioRss: ring0MemoryRatio(ringFive.memory?.meanRssMiB, bareFive.memory?.meanRssMiB),
      ratioPss: ring0MemoryRatio(ringFive.memory?.meanPssMiB, bareFive.memory?.meanPssMiB),
      ratioAnonymous: ring0MemoryRatio(ringFive.memory?.meanAnonymousMiB, bareFive.memory?.meanAnonymousMiB),
    };
    results.tenantStatusTimingsMs = {
      note: "from each Tenant's status.timings (whole-second timestamps), ms after metadata.creationTimestamp; 1-at-once rounds first, then the 5",
      tenants: tenantPhases,
    };
    results.removalMs = {
      note: "informational: Tenant deleted through the controller until the object is gone, vs kwokctl delete cluster; per batch",
      ring0: removal.ring0.map(Math.round),
      bareKwokctl: removal.bare.map(Math.round),
    };
    results.samplesMs = {
      ring0: { 1: samples.ring0[1].map(Math.round), 5: samples.ring0[5].map(Math.round) },
      bareKwokctl: { 1: samples.bare[1].map(Math.round), 5: samples.bare[5].map(Math.round) },
    };
  } catch (error) {
    failed = error;
  } finally {
    failed = await finishBench(cleanup, root, failed);
  }
  if (failed) throw failed;
  writeResults("provisioning", results);
  say(JSON.stringify({ provisioningMs: results.provisioningMs, idleMemoryMiB: summariseMemory(results) }));
}

function ring0MemoryRatio(ring0: number | undefined, bare: number | undefined): number | undefined {
  return ring0 && bare ? ratio(ring0, bare) : undefined;
}

function summariseMemory(results: Record<string, unknown>) {
  type Memory = { meanRssMiB: number; meanPssMiB: number; meanAnonymousMiB: number };
  const memory = results.idleMemoryMiB as { ring0Tenant?: Memory; bareKwokctl?: Memory; ratioPss?: number };
  const figures = (of?: Memory) =>
    of && { rss: of.meanRssMiB, pss: of.meanPssMiB, anonymous: of.meanAnonymousMiB };
  return { ring0: figures(memory.ring0Tenant), bare: figures(memory.bareKwokctl), ratioPss: memory.ratioPss };
}

exitWhenDone(main());
