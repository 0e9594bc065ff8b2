/**
 * Tenant quota enforcement (issue 7), measured in one run on real parts:
 *   1. Admission overhead: `kubectl apply -f` of 200 pods into a tenant control plane with Ring0's
 *      quota webhook registered, against the same apply with no webhook, rounds interleaved (the
 *      registration is toggled and proven in or out of force before each round).
 *   2. Usage computation at 10 tenants × 1000 pods: the breakdown Ring0 computes (tenantUsageFrom,
 *      per namespace and workload) and the ledger's per-pod charge, against JSON.parse of the same
 *      pod lists (the cost of merely reading them).
 *   3. The race for the last units: rounds of 50 concurrent pod creates when only K fit; every round
 *      must admit exactly K (never more: no oversubscription; never fewer: no lost room).
 *
 * Target: one tenant control plane of the local provisioner (its apiserver presents its client
 * certificate to Ring0's webhook through the AdmissionConfiguration the provisioner writes), Ring0's
 * webhook server and quota ledger in this process. Writes bench/results/quotas.json; never asserts
 * on time, only on correctness (every pod admitted in the overhead runs; exact race outcomes).
 *
 *   npx tsx bench/quotas.ts [rounds=3] [race-rounds=5]
 */
import fs from "node:fs";
import path from "node:path";
import { syncQuotaWebhook } from "@/server/admission/registration";
import { startAdmission } from "@/server/admission/start";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { createObject, deleteObject, type KubeObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLocalProvisioner } from "@/server/provisioners/local";
import { kubeconfigFromAccess } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import { tenantUsageFrom } from "@/server/quotas/tenant-usage";
import { podUsage } from "@/server/quotas/usage";
import type { TenantResource } from "@/server/tenants/tenant-resources";
import { kubectl } from "./lib/clients";
import { ratio, round, say, sized, summary, writeResults } from "./lib/figures";
import {
  benchDir,
  cleanUpOnSignal,
  cleanupStack,
  exitWhenDone,
  finishBench,
  logger,
  waitFor,
} from "./lib/run";
import { startBenchTenant } from "./lib/tenants";

const ROUNDS = Number(process.argv[2] ?? sized(3, 2));
const RACE_ROUNDS = Number(process.argv[3] ?? sized(5, 3));
const APPLY_PODS = sized(200, 100);
const RACERS = 50;
const USAGE_TENANTS = 10;
const USAGE_PODS = sized(1_000, 300);

function podManifest(name: string, namespace: string, cpu: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels: { bench: "quotas" } },
    spec: {
      containers: [
        {
          name: "main",
          image: "nginx",
          resources: { requests: { cpu, memory: "64Mi" }, limits: { cpu, memory: "64Mi" } },
        },
      ],
      terminationGracePeriodSeconds: 0,
    },
  };
}

/** A pod as a controller would make it, with an init container and a sidecar, for the usage figures. */
function syntheticPod(tenant: number, index: number): unknown {
  return {
    metadata: {
      name: `w${index % 50}-${index}`,
      namespace: `ns-${index % 7}`,
      uid: `${tenant}-${index}`,
      ownerReferences: [{ kind: "ReplicaSet", name: `w${index % 50}-abc`, controller: true }],
      labels: { app: `w${index % 50}` },
    },
    spec: {
      initContainers: [
        { name: "init", resources: { requests: { cpu: "200m", memory: "128Mi" } } },
        { name: "proxy", restartPolicy: "Always", resources: { requests: { cpu: "50m", memory: "32Mi" } } },
      ],
      containers: [
        {
          name: "app",
          resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { cpu: "500m", memory: "512Mi" } },
        },
        { name: "log", resources: { requests: { cpu: "10m", memory: "16Mi" } } },
      ],
    },
    status: { phase: index % 10 === 0 ? "Succeeded" : "Running" },
  };
}

async function podCount(conn: ClusterConnection): Promise<number> {
  const list = await kubeRequest<{ items: unknown[] }>(conn, {
    path: "/api/v1/pods",
    query: { limit: "1000" },
  });
  return list.items.length;
}

async function deleteAllPods(conn: ClusterConnection, namespace: string): Promise<void> {
  await kubeRequest(conn, {
    method: "DELETE",
    path: `/api/v1/namespaces/${namespace}/pods`,
    query: { gracePeriodSeconds: "0" },
  });
  await waitFor("pods deleted", async () => (await podCount(conn)) === 0, {
    timeoutMs: 60_000,
    everyMs: 100,
  });
}

async function main() {
  const root = await benchDir("ring0-bench-quota-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  const results: Record<string, unknown> = { measuredAt: new Date().toISOString() };
  let failed: unknown;
  const started = performance.now();
  try {
    // 2. Usage computation first: pure CPU, before any process of ours competes for it.
    const lists = Array.from({ length: USAGE_TENANTS }, (_, tenant) =>
      JSON.stringify({
        items: Array.from({ length: USAGE_PODS }, (_, index) => syntheticPod(tenant, index)),
      }),
    );
    const now = new Date();
    const usageSamples = { parse: [] as number[], breakdown: [] as number[], ledgerCharge: [] as number[] };
    for (let r = 0; r < 7; r++) {
      let at = performance.now();
      const parsed = lists.map((text) => (JSON.parse(text) as { items: unknown[] }).items);
      usageSamples.parse.push(performance.now() - at);
      at = performance.now();
      for (const pods of parsed)
        tenantUsageFrom({ pods, namespaces: [], resourceQuotas: [], others: [] }, now);
      usageSamples.breakdown.push(performance.now() - at);
      at = performance.now();
      for (const pods of parsed) for (const pod of pods) podUsage(pod as never);
      usageSamples.ledgerCharge.push(performance.now() - at);
    }
    const usage = {
      tenants: USAGE_TENANTS,
      podsPerTenant: USAGE_PODS,
      parseMs: summary(usageSamples.parse.slice(2), 2),
      breakdownMs: summary(usageSamples.breakdown.slice(2), 2),
      ledgerChargeMs: summary(usageSamples.ledgerCharge.slice(2), 2),
      breakdownToParseP50: 0,
      perPodBreakdownMicros: 0,
    };
    usage.breakdownToParseP50 = ratio(usage.breakdownMs.p50, usage.parseMs.p50);
    usage.perPodBreakdownMicros = round((usage.breakdownMs.p50 * 1000) / (USAGE_TENANTS * USAGE_PODS), 2);
    results.usageComputation = usage;
    say(`usage computation: ${JSON.stringify(usage)}`);

    const binDir = await kubeBinaries(logger, { build: false });
    const kubectlBinary = path.join(binDir, "kubectl");
    const tenant = `qb${Date.now().toString(36).slice(-4)}`;
    const stateDir = path.join(root, "ring0");
    const provisioner = createLocalProvisioner({ stateDir, logger, binDir, vnAgentStateDir: stateDir });
    cleanup.push("tenant control plane destroy", () => provisioner.destroy(tenant));
    const { access, conn } = await startBenchTenant(provisioner, tenant);
    const kubeconfig = path.join(root, "admin.kubeconfig");
    fs.writeFileSync(kubeconfig, kubeconfigFromAccess(access, tenant), { mode: 0o600 });
    const cacheDir = path.join(root, "kubectl", "cache");

    let hard: Record<string, string> = { "requests.cpu": "1000", pods: "100000" };
    const admission = await startAdmission({
      stateDir,
      tenants: {
        find: async (name) => ({
          resource:
            name === tenant
              ? ({
                  apiVersion: "ring0.dev/v1alpha1",
                  kind: "Tenant",
                  metadata: { name },
                  spec: { quota: { hard } },
                } as TenantResource)
              : undefined,
        }),
      },
      directory: {
        lookup: async (name) => (name === tenant ? { state: "ready", access } : { state: "absent" }),
      },
      logger,
      recordRefusals: false,
    });
    cleanup.push("admission stop", () => admission.stop());
    const namespace = "bench";
    await createObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });

    /** Registers (or removes) the webhook and waits until the API server acts accordingly. */
    const webhook = async (on: boolean) => {
      await syncQuotaWebhook(conn, on ? { hard } : undefined);
      const probe = podManifest("probe", namespace, "100000");
      await waitFor(
        `webhook ${on ? "in" : "out of"} force`,
        async () => {
          try {
            await kubeRequest(conn, {
              method: "POST",
              path: `/api/v1/namespaces/${namespace}/pods`,
              query: { dryRun: "All" },
              body: probe,
            });
            return !on;
          } catch (error) {
            return on && String(error).includes("exceeded tenant quota");
          }
        },
        { timeoutMs: 30_000, everyMs: 100 },
      );
    };

    // 1. Admission overhead: kubectl apply of 200 pods, webhook on vs off, interleaved.
    const manifest = path.join(root, "pods.yaml");
    fs.writeFileSync(
      manifest,
      Array.from({ length: APPLY_PODS }, (_, index) =>
        JSON.stringify(podManifest(`p${index}`, namespace, "10m")),
      ).join("\n---\n"),
    );
    const apply = { webhook: [] as number[], none: [] as number[] };
    /** TLS connections the API server opened to the webhook per apply of 200 pods. */
    const handshakes: number[] = [];
    for (let r = 0; r < ROUNDS + 1; r++) {
      for (const arm of r % 2 === 0 ? (["webhook", "none"] as const) : (["none", "webhook"] as const)) {
        await webhook(arm === "webhook");
        const handshakesBefore = admission.handshakes();
        const at = performance.now();
        const result = await kubectl(kubectlBinary, kubeconfig, cacheDir, ["apply", "-f", manifest]);
        const seconds = (performance.now() - at) / 1000;
        if (arm === "webhook") handshakes.push(admission.handshakes() - handshakesBefore);
        if (result.code !== 0) throw new Error(`kubectl apply (${arm}) failed: ${result.stderr}`);
        const count = await podCount(conn);
        if (count !== APPLY_PODS)
          throw new Error(`kubectl apply (${arm}) left ${count} pods, not ${APPLY_PODS}`);
        if (r > 0) apply[arm].push(seconds); // round 0 warms kubectl's discovery cache and the ledger
        say(`apply ${APPLY_PODS} pods, ${arm}: ${round(seconds, 2)} s`);
        await deleteAllPods(conn, namespace);
      }
    }
    const applyResult = {
      pods: APPLY_PODS,
      webhookSeconds: summary(apply.webhook, 2),
      noWebhookSeconds: summary(apply.none, 2),
      ratioP50: ratio(summary(apply.webhook, 2).p50, summary(apply.none, 2).p50),
      webhookTlsHandshakesPerApply: handshakes,
      addedMsPerPodP50: round(
        ((summary(apply.webhook, 2).p50 - summary(apply.none, 2).p50) * 1000) / APPLY_PODS,
        2,
      ),
    };
    results.admissionOverhead = applyResult;
    say(`admission overhead: ${JSON.stringify(applyResult)}`);

    // 3. The race for the last units.
    await webhook(true);
    const races: Array<{ room: number; racers: number; admitted: number; exact: boolean; ms: number }> = [];
    for (let r = 0; r < RACE_ROUNDS; r++) {
      const room = [1, 10, 25, 3, 49][r % 5] as number;
      // The quota leaves exactly `room` pods of 100m: 1 CPU is held by a filler pod.
      hard = { "requests.cpu": `${1000 + room * 100}m`, pods: "100000" };
      await createObject(conn, podManifest("filler", namespace, "1"));
      await waitFor(
        "ledger sees the filler",
        async () => (await admission.admission.usage(tenant))?.["requests.cpu"] === 1_000_000_000n,
        {
          timeoutMs: 15_000,
          everyMs: 50,
        },
      );
      const at = performance.now();
      const outcomes = await Promise.all(
        Array.from({ length: RACERS }, (_, index) =>
          createObject(conn, podManifest(`race-${r}-${index}`, namespace, "100m")).then(
            () => true,
            (error: unknown) => {
              if (!String(error).includes("exceeded tenant quota")) throw error;
              return false;
            },
          ),
        ),
      );
      const ms = round(performance.now() - at, 1);
      const admitted = outcomes.filter(Boolean).length;
      const stored = (await podCount(conn)) - 1;
      races.push({ room, racers: RACERS, admitted, exact: admitted === room && stored === room, ms });
      say(`race ${r}: room ${room}, ${RACERS} racers, ${admitted} admitted (${stored} stored) in ${ms} ms`);
      await deleteAllPods(conn, namespace);
      await waitFor(
        "ledger empty",
        async () => !(await admission.admission.usage(tenant))?.["requests.cpu"],
        {
          timeoutMs: 15_000,
          everyMs: 50,
        },
      );
    }
    results.race = {
      rounds: races,
      neverOversubscribed: races.every((race) => race.admitted <= race.room),
      allExact: races.every((race) => race.exact),
    };
    results.config = { rounds: ROUNDS, raceRounds: RACE_ROUNDS, version: availableVersions()[0] };
    results.baselines = {
      admissionOverhead:
        "the same `kubectl apply -f` of the same 200 pods into the same control plane with Ring0's webhook not registered",
      usageComputation: "JSON.parse of the same pod lists (the cost of merely reading the objects)",
    };
    if (!races.every((race) => race.exact))
      failed = new Error(`a race round was not exact: ${JSON.stringify(races)}`);
    await deleteObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  } catch (error) {
    failed = error;
  } finally {
    results.runtimeSeconds = round((performance.now() - started) / 1000, 0);
    failed = await finishBench(cleanup, root, failed);
  }
  if (failed) {
    say(`partial figures: ${JSON.stringify(results)}`);
    throw failed;
  }
  writeResults("quotas", results);
}

exitWhenDone(main());
