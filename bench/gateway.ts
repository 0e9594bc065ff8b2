/**
 * Kube gateway overhead, each figure a ratio to the same request made directly against the same
 * kube-apiserver with its admin credentials, samples interleaved so both see the same load:
 *   - `kubectl get ns` (N=30 each, discovery cache warm);
 *   - a raw HTTPS GET of /api/v1/namespaces over one keep-alive connection (N=200 each);
 *   - watch-event latency: one watch on ConfigMaps through the gateway and one direct, open at the
 *     same time; the time from sending a ConfigMap create to its ADDED event on each (N=50).
 *
 * Target: one tenant control plane of the local provisioner (etcd, kube-apiserver,
 * kube-controller-manager on 127.0.0.1) with the tenant defaults applied, so the gateway's
 * impersonated tenant admin is authorised by the tenant's own RBAC. Gateway: createKubeGateway with
 * real token verification (embedded PostgreSQL, migrations) behind its HTTPS listener with Ring0's
 * own CA, the directory over a Ready Tenant object (no super cluster needed). Every process
 * started is gone at the end (checked in /proc). Writes bench/results/gateway.json; never asserts
 * on time, only that every request succeeded.
 *
 *   npx tsx bench/gateway.ts [http-n=200] [kubectl-n=30] [watch-n=50]
 */
import fs from "node:fs";
import https from "node:https";
import path from "node:path";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { createLocalProvisioner } from "@/server/provisioners/local";
import { kubeconfigFromAccess } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import { createControlPlaneDirectory } from "@/server/tenants/control-planes";
import { kubeGroupsFor, kubeUserName } from "@/server/tenants/kube-identity";
import type { TenantResource } from "@/server/tenants/tenant-resources";
import { createTokenService } from "@/server/tokens/service";
import {
  benchDir,
  cleanUpOnSignal,
  cleanupStack,
  exitWhenDone,
  finishBench,
  type HttpsIdentity,
  httpsAgent,
  httpsRequest,
  kubectl,
  logger,
  ratio,
  say,
  startBenchGateway,
  startBenchTenant,
  startDatabase,
  summary,
  tenantAdminToken,
  writeResults,
  writeTokenKubeconfig,
} from "./lib/harness";

const httpN = Number(process.argv[2] ?? 200);
const kubectlN = Number(process.argv[3] ?? 30);
const watchN = Number(process.argv[4] ?? 50);

interface WatchStream {
  close(): void;
}

/** A ConfigMap watch in `default`; calls `onAdded(name)` as each ADDED event arrives. */
function openWatch(
  base: string,
  identity: HttpsIdentity,
  resourceVersion: string,
  onAdded: (name: string) => void,
): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: "application/json" };
    if (identity.token) headers.authorization = `Bearer ${identity.token}`;
    const request = https.request(
      `${base}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${resourceVersion}`,
      { headers, agent: httpsAgent(identity, false) },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`watch via ${base} answered ${response.statusCode}`));
          response.resume();
          return;
        }
        let buffered = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          buffered += chunk;
          let newline = buffered.indexOf("\n");
          while (newline >= 0) {
            const line = buffered.slice(0, newline);
            buffered = buffered.slice(newline + 1);
            newline = buffered.indexOf("\n");
            if (!line.trim()) continue;
            const event = JSON.parse(line) as { type: string; object?: { metadata?: { name?: string } } };
            if (event.type === "ADDED" && event.object?.metadata?.name) onAdded(event.object.metadata.name);
          }
        });
        response.on("error", () => undefined);
        resolve({ close: () => request.destroy() });
      },
    );
    request.on("error", reject);
    request.end();
  });
}

async function main() {
  const root = await benchDir("ring0-bench-gw-");
  const cleanup = cleanupStack();
  cleanUpOnSignal(cleanup, root);
  const results: Record<string, unknown> = { measuredAt: new Date().toISOString() };
  let failed: unknown;
  try {
    const binDir = await kubeBinaries(logger, { build: false });
    const kubectlBinary = path.join(binDir, "kubectl");
    const tenant = `gwb${Date.now().toString(36).slice(-4)}`;

    // The tenant control plane, as the tenant reconciler would bring it up (defaults included).
    const provisioner = createLocalProvisioner({ stateDir: path.join(root, "ring0"), logger, binDir });
    cleanup.push("tenant control plane destroy", () => provisioner.destroy(tenant));
    const { access } = await startBenchTenant(provisioner, tenant);

    const database = await startDatabase(path.join(root, "pg"));
    cleanup.push("postgres stop", () => database.stop());
    const token = await tenantAdminToken(database.db, tenant);

    // The real directory over a Tenant object that is Ready on the local provisioner.
    const resource = {
      apiVersion: "ring0.dev/v1alpha1",
      kind: "Tenant",
      metadata: { name: tenant },
      spec: {},
      status: {
        phase: "Ready",
        provisioner: "local",
        endpoint: access.server,
        conditions: [{ type: "ControlPlaneReady", status: "True", reason: "Running" }],
      },
    } as unknown as TenantResource;
    const directory = createControlPlaneDirectory({
      tenants: { find: async (name) => ({ resource: name === tenant ? resource : undefined }) },
      provisioners: { local: provisioner },
      defaultProvisioner: "local",
    });
    const gateway = await startBenchGateway(path.join(root, "gateway"), database.db, directory);
    cleanup.push("gateway close", () => gateway.close());

    const viaGateway = { base: `${gateway.url}/k8s/tenants/${tenant}`, identity: { ca: gateway.ca, token } };
    const direct = { base: access.server, identity: { ca: access.ca, cert: access.cert, key: access.key } };
    const arms = { gateway: viaGateway, direct } as const;
    type Arm = keyof typeof arms;
    const order = (i: number): Arm[] => (i % 2 === 0 ? ["gateway", "direct"] : ["direct", "gateway"]);

    // 1. Raw GET /api/v1/namespaces over one keep-alive connection per arm.
    const agents = {
      gateway: httpsAgent(viaGateway.identity, true),
      direct: httpsAgent(direct.identity, true),
    };
    cleanup.push("agents", () => {
      agents.gateway.destroy();
      agents.direct.destroy();
    });
    const get = async (arm: Arm): Promise<number> => {
      const started = performance.now();
      const answer = await httpsRequest(`${arms[arm].base}/api/v1/namespaces`, arms[arm].identity, {
        agent: agents[arm],
      });
      const elapsed = performance.now() - started;
      if (answer.status !== 200)
        throw new Error(`GET namespaces via ${arm}: ${answer.status} ${answer.body}`);
      return elapsed;
    };
    for (let i = 0; i < 20; i++) for (const arm of order(i)) await get(arm);
    const http = { gateway: [] as number[], direct: [] as number[] };
    for (let i = 0; i < httpN; i++) for (const arm of order(i)) http[arm].push(await get(arm));
    const httpResult = {
      gateway: summary(http.gateway, 2),
      direct: summary(http.direct, 2),
      ratioP50: ratio(summary(http.gateway, 2).p50, summary(http.direct, 2).p50),
      ratioP95: ratio(summary(http.gateway, 2).p95, summary(http.direct, 2).p95),
      addedP50Ms: +(summary(http.gateway, 2).p50 - summary(http.direct, 2).p50).toFixed(2),
    };
    say(`GET /api/v1/namespaces keep-alive: ${JSON.stringify(httpResult)}`);

    // Where the gateway's added time goes (informational): the same direct GET with the
    // impersonation headers the gateway adds (the API server's side of it), and token verification
    // alone (Ring0's side: PostgreSQL lookups per request).
    const identityHeaders = {
      "impersonate-user": kubeUserName(tenant, `${tenant}:${tenant}-admin`),
      "impersonate-group": kubeGroupsFor(tenant, "tenant-admin"),
    };
    const impersonating: number[] = [];
    const verifying: number[] = [];
    const tokens = createTokenService({ db: database.db });
    for (let i = 0; i < httpN; i++) {
      const started = performance.now();
      const answer = await httpsRequest(`${direct.base}/api/v1/namespaces`, direct.identity, {
        agent: agents.direct,
        headers: identityHeaders,
      });
      impersonating.push(performance.now() - started);
      if (answer.status !== 200)
        throw new Error(`impersonated GET namespaces: ${answer.status} ${answer.body}`);
      const verifyStarted = performance.now();
      if (!(await tokens.verifyToken(token))) throw new Error("the bench token did not verify");
      verifying.push(performance.now() - verifyStarted);
    }
    const breakdown = {
      directImpersonating: summary(impersonating, 2),
      verifyTokenOnly: summary(verifying, 2),
    };
    say(`breakdown: ${JSON.stringify(breakdown)}`);

    // 2. kubectl get ns, each arm with its own (warm) discovery cache.
    const kubeconfigs = {
      gateway: writeTokenKubeconfig(
        path.join(root, "gateway.kubeconfig"),
        viaGateway.base,
        gateway.ca,
        token,
      ),
      direct: path.join(root, "direct.kubeconfig"),
    };
    fs.writeFileSync(kubeconfigs.direct, kubeconfigFromAccess(access, "direct"), { mode: 0o600 });
    const getNs = async (arm: Arm): Promise<number> => {
      const started = performance.now();
      const result = await kubectl(
        kubectlBinary,
        kubeconfigs[arm],
        path.join(root, "kubectl", arm, "cache"),
        ["get", "ns"],
      );
      const elapsed = performance.now() - started;
      if (result.code !== 0 || !/\bdefault\b/.test(result.stdout))
        throw new Error(`kubectl get ns via ${arm} failed: ${result.stderr}`);
      return elapsed;
    };
    for (let i = 0; i < 2; i++) for (const arm of order(i)) await getNs(arm);
    const kubectlSamples = { gateway: [] as number[], direct: [] as number[] };
    for (let i = 0; i < kubectlN; i++) for (const arm of order(i)) kubectlSamples[arm].push(await getNs(arm));
    const kubectlResult = {
      gateway: summary(kubectlSamples.gateway, 1),
      direct: summary(kubectlSamples.direct, 1),
      ratioP50: ratio(summary(kubectlSamples.gateway, 1).p50, summary(kubectlSamples.direct, 1).p50),
      ratioP95: ratio(summary(kubectlSamples.gateway, 1).p95, summary(kubectlSamples.direct, 1).p95),
    };
    say(`kubectl get ns: ${JSON.stringify(kubectlResult)}`);

    // 3. Watch-event latency: both watches open at once, one create, the arrival on each.
    const list = await httpsRequest(`${direct.base}/api/v1/namespaces/default/configmaps`, direct.identity, {
      agent: agents.direct,
    });
    const resourceVersion = (JSON.parse(list.body) as { metadata: { resourceVersion: string } }).metadata
      .resourceVersion;
    const arrivals = new Map<string, { gateway?: number; direct?: number; done?: () => void }>();
    const arrived = (arm: Arm) => (name: string) => {
      const entry = arrivals.get(name) ?? {};
      entry[arm] = performance.now();
      arrivals.set(name, entry);
      if (entry.gateway !== undefined && entry.direct !== undefined) entry.done?.();
    };
    const watches = await Promise.all([
      openWatch(viaGateway.base, viaGateway.identity, resourceVersion, arrived("gateway")),
      openWatch(direct.base, direct.identity, resourceVersion, arrived("direct")),
    ]);
    cleanup.push("watches", () => {
      for (const watch of watches) watch.close();
    });
    const watch = { gateway: [] as number[], direct: [] as number[] };
    for (let i = -5; i < watchN; i++) {
      const name = `bench-${i + 5}`;
      const both = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no watch event for ${name} on both watches`)),
          15_000,
        );
        arrivals.set(name, {
          done: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
      const started = performance.now();
      const created = await httpsRequest(
        `${direct.base}/api/v1/namespaces/default/configmaps`,
        direct.identity,
        {
          agent: agents.direct,
          method: "POST",
          body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { i: String(i) } },
        },
      );
      if (created.status !== 201)
        throw new Error(`creating ConfigMap ${name}: ${created.status} ${created.body}`);
      await both;
      const entry = arrivals.get(name) as { gateway: number; direct: number };
      if (i < 0) continue; // warm-up
      watch.gateway.push(entry.gateway - started);
      watch.direct.push(entry.direct - started);
    }
    const watchResult = {
      gateway: summary(watch.gateway, 2),
      direct: summary(watch.direct, 2),
      ratioP50: ratio(summary(watch.gateway, 2).p50, summary(watch.direct, 2).p50),
      ratioP95: ratio(summary(watch.gateway, 2).p95, summary(watch.direct, 2).p95),
      addedP50Ms: +(summary(watch.gateway, 2).p50 - summary(watch.direct, 2).p50).toFixed(2),
    };
    say(`watch event latency: ${JSON.stringify(watchResult)}`);

    results.target =
      "a local tenant control plane (local provisioner: etcd, kube-apiserver, kube-controller-manager on 127.0.0.1, tenant defaults applied)";
    results.identities = {
      gateway:
        "a tenant admin's Ring0 API token; the gateway impersonates <tenant>:<user> with the tenant's groups",
      direct: "the control plane's admin client certificate (system:masters), no impersonation",
    };
    results.getNamespacesKeepAliveMs = { ...httpResult, breakdown };
    results.kubectlGetNsMs = kubectlResult;
    results.watchEventLatencyMs = watchResult;
    results.config = { httpN, kubectlN, watchN, version: availableVersions()[0] };
  } catch (error) {
    failed = error;
  } finally {
    failed = await finishBench(cleanup, root, failed);
  }
  if (failed) throw failed;
  writeResults("gateway", results);
}

exitWhenDone(main());
