/**
 * Provisioning benchmark: how long a tenant waits for its control plane, end to end —
 * from creating a `Tenant` object in the super cluster to `kubectl get ns` succeeding through the
 * kube gateway as a tenant user with a Ring0 API token — for 1 tenant and for 5 at once (p50/p95),
 * against bare `kwokctl create cluster` (same binaries, same components: etcd, kube-apiserver,
 * kube-controller-manager; `--disable kube-scheduler,kwok-controller`) until `kubectl get ns`
 * succeeds with its admin kubeconfig, at the same concurrency, in the same run. Also the memory of
 * an idle tenant control plane (summed VmRSS of its etcd + kube-apiserver +
 * kube-controller-manager after ~20 s idle) against an idle bare cluster.
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
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { kubeBinaries, runKwokctl } from "@/server/cluster/kwokctl";
import { renderKwokctlConfig } from "@/server/cluster/kwokctl-config";
import { localSuperCluster } from "@/server/cluster/local";
import { freePortsFor } from "@/server/cluster/ports";
import { createObject, deleteObject, readObject } from "@/server/k8s/apply";
import { type ClusterConnection, connectCluster } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { isNotFound } from "@/server/k8s/errors";
import {
  controlPlaneCreateArgs,
  createLocalProvisioner,
  LOCAL_COMPONENTS,
  localClusterName,
} from "@/server/provisioners/local";
import { createControlPlaneDirectory } from "@/server/tenants/control-planes";
import { startTenantController } from "@/server/tenants/controller";
import type { TenantStatus } from "@/server/tenants/status";
import {
  type TenantResource,
  tenantApiVersion,
  tenantInformer,
  tenantKind,
} from "@/server/tenants/tenant-resources";
import {
  benchDir,
  cleanUpOnSignal,
  cleanupStack,
  exitWhenDone,
  finishBench,
  type HttpsIdentity,
  httpsRequest,
  kubectl,
  logger,
  ratio,
  reapLeftovers,
  round,
  rssKiB,
  say,
  sized,
  sleep,
  startBenchGateway,
  startDatabase,
  summary,
  tenantAdminToken,
  waitFor,
  writeResults,
  writeTokenKubeconfig,
} from "./lib/harness";

const roundsOfOne = Number(process.argv[2] ?? sized(3, 2));
const idleSeconds = Number(process.argv[3] ?? sized(20, 10));
const CONCURRENT = 5;
const TIMEOUT_MS = 5 * 60_000;
const PORT_OPTIONS = ["kubeApiserverPort", "etcdPort", "etcdPeerPort", "kubeControllerManagerPort"] as const;

/** Set by main: throws once cleanup has started (a signal), so polling loops end. */
let stopCheck: () => void = () => {};

const tenantRef = (name: string) => ({ apiVersion: tenantApiVersion, kind: tenantKind, metadata: { name } });

/** One control plane being brought up: what to time, how to reach it, how to remove it. */
interface Subject {
  name: string;
  /** Starts it; resolves when the request to create it has been made (kwokctl: when it returned). */
  create(): Promise<void>;
  /** A cheap probe (one HTTPS GET of /api/v1/namespaces) for polling. */
  probe(): Promise<boolean>;
  /** The real check: `kubectl get ns`. */
  kubectlGetNs(): Promise<boolean>;
  /** Pid files of etcd, kube-apiserver, kube-controller-manager. */
  pidDir: string;
  remove(): Promise<void>;
  /** Ring0 only: the Tenant's own status timings (ms after its creation), read once it serves. */
  phases?(): Promise<Record<string, number>>;
}

/** Create → kubectl get ns works. Polls with the cheap probe so 5 pollers do not load 2 cores. */
async function timeToKubectl(subject: Subject): Promise<number> {
  const started = performance.now();
  await subject.create();
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    if (await subject.probe().catch(() => false)) {
      if (await subject.kubectlGetNs()) return performance.now() - started;
    }
    if (Date.now() > deadline) throw new Error(`${subject.name}: kubectl get ns did not succeed in time`);
    stopCheck();
    await sleep(100);
  }
}

function readPem(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** Summed VmRSS (MiB) of each control plane's three components, from kwokctl's pid files. */
function controlPlaneRss(subjects: Subject[]) {
  const perPlane = subjects.map((subject) => {
    const byComponent: Record<string, number> = {};
    for (const component of LOCAL_COMPONENTS) {
      const pid = Number(readPem(path.join(subject.pidDir, `${component}.pid`))?.trim());
      const kib = Number.isInteger(pid) && pid > 0 ? rssKiB(pid) : 0;
      if (kib === 0) throw new Error(`${subject.name}: no running ${component} to measure`);
      byComponent[component] = round(kib / 1024);
    }
    return {
      name: subject.name,
      totalMiB: round(Object.values(byComponent).reduce((a, b) => a + b, 0)),
      byComponent,
    };
  });
  const totals = perPlane.map((plane) => plane.totalMiB);
  return {
    meanMiB: round(totals.reduce((a, b) => a + b, 0) / totals.length),
    maxMiB: round(Math.max(...totals)),
    perPlane,
  };
}

async function main() {
  const root = await benchDir("ring0-bench-prov-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  stopCheck = () => cleanup.throwIfStopping();
  const results: Record<string, unknown> = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, memoryGiB: round(os.totalmem() / 2 ** 30) },
  };
  let failed: unknown;
  try {
    const binDir = await kubeBinaries(logger, { build: false });
    const kubectlBinary = path.join(binDir, "kubectl");

    // The super cluster (Tenant objects live there) and the CRDs.
    const superCluster = localSuperCluster({ stateDir: path.join(root, "super"), logger });
    cleanup.push("super cluster down", () => superCluster.down());
    const up = await superCluster.up({ nodes: 1 });
    const conn: ClusterConnection = connectCluster("bench-super", { file: up.kubeconfig });
    await installCrds(conn, logger);

    // PostgreSQL for users, memberships and tokens.
    const database = await startDatabase(path.join(root, "pg"));
    cleanup.push("postgres stop", () => database.stop());

    // The tenant controller with the local provisioner, as the runtime starts it.
    const provisioner = createLocalProvisioner({ stateDir: path.join(root, "ring0"), logger, binDir });
    const controller = startTenantController(conn, {
      superCluster: conn,
      provisioners: { local: provisioner },
      defaultProvisioner: "local",
      logger,
    });
    // Safety net once the controller has stopped: whatever tenant control plane is left goes.
    cleanup.push("leftover tenant control planes", async () => {
      for (const tenant of await provisioner.list()) await provisioner.destroy(tenant);
    });
    cleanup.push("tenant controller stop", () => controller.stop());
    // The directory over the Tenant informer (as server/runtime/tenants.ts builds it) and the gateway.
    const informer = tenantInformer(conn);
    cleanup.push(
      "tenant informer release",
      informer.subscribe(() => {}),
    );
    const directory = createControlPlaneDirectory({
      tenants: {
        async find(tenant) {
          await informer.synced();
          return {
            resource: informer.snapshot().find((item: TenantResource) => item.metadata.name === tenant),
          };
        },
      },
      provisioners: { local: provisioner },
      defaultProvisioner: "local",
    });
    const gateway = await startBenchGateway(path.join(root, "gateway"), database.db, directory);
    cleanup.push("gateway close", () => gateway.close());

    const suffix = Date.now().toString(36).slice(-4);
    let serial = 0;

    const ring0Tenant = async (): Promise<Subject> => {
      const name = `bp${suffix}-${serial++}`;
      const token = await tenantAdminToken(database.db, name);
      const dir = path.join(root, "kubectl", name);
      fs.mkdirSync(dir, { recursive: true });
      const server = `${gateway.url}/k8s/tenants/${name}`;
      const kubeconfig = writeTokenKubeconfig(path.join(dir, "kubeconfig"), server, gateway.ca, token);
      const identity: HttpsIdentity = { ca: gateway.ca, token };
      return {
        name,
        create: async () => {
          await createObject(conn, { ...tenantRef(name), spec: {} });
        },
        probe: async () => (await httpsRequest(`${server}/api/v1/namespaces`, identity)).status === 200,
        kubectlGetNs: async () =>
          (await kubectl(kubectlBinary, kubeconfig, path.join(dir, "cache"), ["get", "ns"])).code === 0,
        pidDir: path.join(root, "ring0", "tenants", name, "clusters", localClusterName(name), "pids"),
        phases: async () => {
          const tenant = await readObject<TenantResource>(conn, tenantRef(name));
          const timings = (tenant.status as TenantStatus | undefined)?.timings ?? {};
          const created = new Date(tenant.metadata.creationTimestamp ?? Number.NaN).getTime();
          const after = (at: string | undefined) => (at ? Date.parse(at) - created : Number.NaN);
          return {
            provisioningStarted: after(timings.provisioningStartedAt),
            controlPlaneReady: after(timings.controlPlaneReadyAt),
            ready: after(timings.readyAt),
          };
        },
        // Through the controller: the finalizer goes once the control plane is destroyed.
        remove: async () => {
          await deleteObject(conn, tenantRef(name));
          await waitFor(
            `${name} deleted`,
            async () => {
              try {
                await readObject(conn, tenantRef(name));
                return false;
              } catch (error) {
                return isNotFound(error);
              }
            },
            { timeoutMs: TIMEOUT_MS, everyMs: 200 },
          );
        },
      };
    };

    const bareCluster = async (): Promise<Subject> => {
      const name = `bare${suffix}-${serial++}`;
      const workDir = path.join(root, "bare", name);
      fs.mkdirSync(workDir, { recursive: true });
      const ports = await freePortsFor(PORT_OPTIONS);
      const configPath = path.join(workDir, "kwok.yaml");
      fs.writeFileSync(
        configPath,
        renderKwokctlConfig({ workDir, binDir, writer: "bench/provisioning.ts", ports }),
      );
      const cluster = { workDir, name, configPath };
      const kubeconfig = path.join(workDir, "kubeconfig");
      const pki = path.join(workDir, "clusters", name, "pki");
      const server = `https://127.0.0.1:${ports.kubeApiserverPort}`;
      return {
        name,
        create: async () => {
          await runKwokctl(cluster, binDir, controlPlaneCreateArgs(kubeconfig), {
            timeoutMs: TIMEOUT_MS,
            logger,
          });
        },
        probe: async () => {
          const ca = readPem(path.join(pki, "ca.crt"));
          const cert = readPem(path.join(pki, "admin.crt"));
          const key = readPem(path.join(pki, "admin.key"));
          if (!ca || !cert || !key) return false;
          return (await httpsRequest(`${server}/api/v1/namespaces`, { ca, cert, key })).status === 200;
        },
        kubectlGetNs: async () =>
          (await kubectl(kubectlBinary, kubeconfig, path.join(workDir, "kubectl", "cache"), ["get", "ns"]))
            .code === 0,
        pidDir: path.join(workDir, "clusters", name, "pids"),
        remove: async () => {
          await runKwokctl(cluster, binDir, ["delete", "cluster"], { timeoutMs: 120_000, logger });
          await reapLeftovers(workDir);
          fs.rmSync(workDir, { recursive: true, force: true });
        },
      };
    };

    /** 1-minute load average before and after each batch: this machine is shared; read ratios with it. */
    const machineLoad: Array<{ batch: string; load1: number[] }> = [];
    /** `count` control planes at once; times each, optionally measures idle memory, removes them. */
    const batch = async (make: () => Promise<Subject>, count: number, measureMemory: boolean) => {
      cleanup.throwIfStopping();
      const load1 = [round(os.loadavg()[0] ?? 0, 2)];
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
      const times = await Promise.all(subjects.map(timeToKubectl));
      const phases = await Promise.all(subjects.map((subject) => subject.phases?.()));
      load1.push(round(os.loadavg()[0] ?? 0, 2));
      machineLoad.push({
        batch: `${count} × ${subjects[0]?.name.startsWith("bare") ? "bare" : "ring0"}`,
        load1,
      });
      let memory: ReturnType<typeof controlPlaneRss> | undefined;
      if (measureMemory) {
        await sleep(idleSeconds * 1000);
        memory = controlPlaneRss(subjects);
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
        const outcome = await batch(kind === "ring0" ? ring0Tenant : bareCluster, 1, false);
        samples[kind][1].push(...outcome.times);
        removal[kind].push(outcome.removeMs);
        tenantPhases.push(...outcome.phases.filter(Boolean));
        say(`1 at once, ${kind}: ${Math.round(outcome.times[0] ?? 0)} ms`);
      }
    }
    const bareFive = await batch(bareCluster, CONCURRENT, true);
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
      ratioMean: ring0MemoryRatio(ringFive.memory, bareFive.memory),
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

function ring0MemoryRatio(
  ring0: { meanMiB: number } | undefined,
  bare: { meanMiB: number } | undefined,
): number | undefined {
  return ring0 && bare ? ratio(ring0.meanMiB, bare.meanMiB) : undefined;
}

function summariseMemory(results: Record<string, unknown>) {
  const memory = results.idleMemoryMiB as {
    ring0Tenant?: { meanMiB: number; maxMiB: number };
    bareKwokctl?: { meanMiB: number; maxMiB: number };
    ratioMean?: number;
  };
  return {
    ring0: { mean: memory.ring0Tenant?.meanMiB, max: memory.ring0Tenant?.maxMiB },
    bare: { mean: memory.bareKwokctl?.meanMiB, max: memory.bareKwokctl?.maxMiB },
    ratioMean: memory.ratioMean,
  };
}

exitWhenDone(main());
