/**
 * Kube gateway overhead, each figure a ratio to the same request made directly against the same
 * kube-apiserver with its admin credentials, samples interleaved so both see the same load:
 *   - `kubectl get ns` (N=30 each, discovery cache warm);
 *   - a raw HTTPS GET of /api/v1/namespaces over one keep-alive connection (N=200 each);
 *   - watch-event latency: one watch on ConfigMaps through the gateway and one direct, open at the
 *     same time; the time from sending a ConfigMap create to its ADDED event on each (N=50);
 *   - a grantee's GET: /api/v1/namespaces/shared/pods over keep-alive HTTPS by a member of another
 *     tenant (`bench-grantee`) through the gateway within a live SharingPolicy grant (get/list/watch
 *     pods in `shared`, its RBAC applied as the sharing controller keeps it), interleaved with the
 *     same GET by the tenant's own admin through the gateway and directly with admin credentials
 *     (N=200 each; p50/p99, ratios grantee/member and grantee/direct). The grantee's GET of pods in
 *     `default`, outside the grant, must be refused with 403 every time (N=20).
 *
 * Target: one tenant control plane of the local provisioner (etcd, kube-apiserver,
 * kube-controller-manager on 127.0.0.1) with the tenant defaults applied, so the gateway's
 * impersonated tenant admin is authorised by the tenant's own RBAC. Gateway: createKubeGateway with
 * real token verification (embedded PostgreSQL, migrations) behind its HTTPS listener with Ring0's
 * own CA, the directory over a Ready Tenant object (no super cluster needed). Every process
 * started is gone at the end (checked in /proc). Writes bench/results/gateway.json; never asserts
 * on time, only that every request succeeded (and that every request outside the grant was refused).
 *
 *   npx tsx bench/gateway.ts [http-n=200] [kubectl-n=30] [watch-n=50]
 */
import fs from "node:fs";
import https from "node:https";
import path from "node:path";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { type KubeObject, serverSideApply } from "@/server/k8s/apply";
import { createLocalProvisioner } from "@/server/provisioners/local";
import { kubeconfigFromAccess } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import { granteeVerdict } from "@/server/sharing/access";
import { specHash } from "@/server/sharing/grants";
import { grantRbacManifests } from "@/server/sharing/rbac";
import { grantName } from "@/server/sharing/resources";
import { type SharingPolicyResource, type SharingSpec, sharingAnnotations } from "@/server/sharing/types";
import { createControlPlaneDirectory } from "@/server/tenants/control-planes";
import { kubeGroupsFor, kubeUserName } from "@/server/tenants/kube-identity";
import type { TenantResource } from "@/server/tenants/tenant-resources";
import { createTokenService } from "@/server/tokens/service";
import { type HttpsIdentity, httpsAgent, httpsRequest, kubectl } from "./lib/clients";
import { startDatabase, tenantAdminToken } from "./lib/database";
import { percentile, ratio, round, say, sized, summary, writeResults } from "./lib/figures";
import { startBenchGateway, writeTokenKubeconfig } from "./lib/gateway";
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

const httpN = Number(process.argv[2] ?? sized(200, 100));
const kubectlN = Number(process.argv[3] ?? sized(30, 15));
const watchN = Number(process.argv[4] ?? sized(50, 25));
/** The grantee's GETs outside the grant, each of which must be refused. */
const refusalN = 20;
/** Pods in the shared namespace (never scheduled: the control plane has no scheduler or nodes). */
const sharedPods = 5;
const granteeTenant = "bench-grantee";
const sharedNamespace = "shared";

/** p50, p95 and p99 (the tail a grant check per request would show in). */
const withP99 = (samples: number[], digits = 2) => ({
  ...summary(samples, digits),
  p99: round(percentile(samples, 99), digits),
});

/**
 * A SharingPolicy as Ring0 writes it once approved: `owner` lets every user of `grantee` get, list
 * and watch pods in the shared namespace for a day (within the default operator policy's 90 days).
 */
function benchGrant(owner: string, grantee: string): SharingPolicyResource {
  const spec: SharingSpec = {
    ownerTenant: owner,
    grantees: [{ tenant: grantee }],
    rules: [
      {
        namespaces: [sharedNamespace],
        apiGroups: [""],
        resources: ["pods"],
        verbs: ["get", "list", "watch"],
      },
    ],
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    purpose: "gateway benchmark: a grantee reads the owner's pods",
  };
  return {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "SharingPolicy",
    metadata: {
      name: grantName(owner, "bench-pods"),
      annotations: {
        [sharingAnnotations.approvedSpec]: specHash(spec),
        [sharingAnnotations.approvedBy]: "bench",
      },
    },
    spec,
  };
}

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
    const { access, conn } = await startBenchTenant(provisioner, tenant);

    const database = await startDatabase(path.join(root, "pg"));
    cleanup.push("postgres stop", () => database.stop());
    const token = await tenantAdminToken(database.db, tenant);
    const granteeToken = await tenantAdminToken(database.db, granteeTenant, "tenant-member");

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
    // Sharing decided as the runtime decides it, from this one grant instead of the informer's.
    const grant = benchGrant(tenant, granteeTenant);
    const gateway = await startBenchGateway(path.join(root, "gateway"), database.db, directory, {
      sharing: {
        verdict: (user, owner, attributes) => granteeVerdict(user, owner, attributes, [grant]),
        watch: () => () => {},
        recordUse: () => {},
      },
    });
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

    // 4. A grantee's GET of the shared pods, against the tenant's own admin through the gateway and
    // the direct GET, one keep-alive connection per arm, the three rotated per round.
    await serverSideApply(
      conn,
      { apiVersion: "v1", kind: "Namespace", metadata: { name: sharedNamespace } },
      { force: true },
    );
    for (let i = 0; i < sharedPods; i++) {
      const pod: KubeObject = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `bench-${i}`, namespace: sharedNamespace },
        spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] },
      };
      // Admission wants the namespace's default ServiceAccount, which the controller manager creates.
      await waitFor(
        `pod bench-${i} in ${sharedNamespace}`,
        async () => Boolean(await serverSideApply(conn, pod, { force: true })),
        { timeoutMs: 60_000, everyMs: 250 },
      );
    }
    for (const manifest of grantRbacManifests(grant)) await serverSideApply(conn, manifest, { force: true });

    const shared = {
      grantee: { base: viaGateway.base, identity: { ca: gateway.ca, token: granteeToken } },
      member: viaGateway,
      direct,
    };
    type SharedArm = keyof typeof shared;
    const sharedArms: SharedArm[] = ["grantee", "member", "direct"];
    const sharedOrder = (i: number): SharedArm[] => [
      ...sharedArms.slice(i % sharedArms.length),
      ...sharedArms.slice(0, i % sharedArms.length),
    ];
    const sharedAgents = {
      grantee: httpsAgent(shared.grantee.identity, true),
      member: httpsAgent(shared.member.identity, true),
      direct: httpsAgent(shared.direct.identity, true),
    };
    cleanup.push("shared agents", () => {
      for (const agent of Object.values(sharedAgents)) agent.destroy();
    });
    const getShared = async (arm: SharedArm, namespace = sharedNamespace) => {
      const started = performance.now();
      const answer = await httpsRequest(
        `${shared[arm].base}/api/v1/namespaces/${namespace}/pods`,
        shared[arm].identity,
        {
          agent: sharedAgents[arm],
        },
      );
      return { elapsed: performance.now() - started, answer };
    };
    const getPods = async (arm: SharedArm): Promise<number> => {
      const { elapsed, answer } = await getShared(arm);
      if (answer.status !== 200)
        throw new Error(`GET ${sharedNamespace} pods via ${arm}: ${answer.status} ${answer.body}`);
      const items = (JSON.parse(answer.body) as { items: unknown[] }).items.length;
      if (items !== sharedPods)
        throw new Error(`GET ${sharedNamespace} pods via ${arm}: ${items} pods, not ${sharedPods}`);
      return elapsed;
    };
    // The grant's RoleBinding takes effect once the API server's RBAC informer has it.
    await waitFor("the grantee's GET allowed", async () => (await getPods("grantee")) >= 0, {
      timeoutMs: 30_000,
      everyMs: 100,
    });
    for (let i = 0; i < 21; i++) for (const arm of sharedOrder(i)) await getPods(arm);
    const sharedSamples = { grantee: [] as number[], member: [] as number[], direct: [] as number[] };
    for (let i = 0; i < httpN; i++)
      for (const arm of sharedOrder(i)) sharedSamples[arm].push(await getPods(arm));
    const grantee = withP99(sharedSamples.grantee);
    const member = withP99(sharedSamples.member);
    const directShared = withP99(sharedSamples.direct);

    // Outside the grant (pods in `default`): refused by the gateway, every time.
    const refusals: number[] = [];
    for (let i = 0; i < refusalN; i++) refusals.push((await getShared("grantee", "default")).answer.status);
    const refused = refusals.filter((status) => status === 403).length;
    if (refused !== refusalN)
      throw new Error(
        `the grantee's GET of pods in default: ${refused}/${refusalN} refused (${refusals.join(", ")})`,
      );

    const sharedResult = {
      grantee,
      member,
      direct: directShared,
      ratioGranteeToMemberP50: ratio(grantee.p50, member.p50),
      ratioGranteeToMemberP99: ratio(grantee.p99, member.p99),
      ratioGranteeToDirectP50: ratio(grantee.p50, directShared.p50),
      ratioGranteeToDirectP99: ratio(grantee.p99, directShared.p99),
      addedOverMemberP50Ms: +(grantee.p50 - member.p50).toFixed(2),
      refusedOutsideGrant: { n: refusalN, status403: refused },
    };
    say(
      `GET /api/v1/namespaces/${sharedNamespace}/pods keep-alive (grantee): ${JSON.stringify(sharedResult)}`,
    );

    results.target =
      "a local tenant control plane (local provisioner: etcd, kube-apiserver, kube-controller-manager on 127.0.0.1, tenant defaults applied)";
    results.identities = {
      gateway:
        "a tenant admin's Ring0 API token; the gateway impersonates <tenant>:<user> with the tenant's groups",
      direct: "the control plane's admin client certificate (system:masters), no impersonation",
      grantee: `a member of tenant ${granteeTenant}'s Ring0 API token; the gateway decides the request against one live SharingPolicy grant (get/list/watch pods in ${sharedNamespace}) and impersonates the grantee's own name and groups, authorised by the grant's Role and RoleBinding`,
      member: "the gateway arm's identity (the tenant's own admin token) on the grantee's request",
    };
    results.getNamespacesKeepAliveMs = { ...httpResult, breakdown };
    results.kubectlGetNsMs = kubectlResult;
    results.watchEventLatencyMs = watchResult;
    results.granteeGetPodsKeepAliveMs = sharedResult;
    results.config = { httpN, kubectlN, watchN, refusalN, sharedPods, version: availableVersions()[0] };
  } catch (error) {
    failed = error;
  } finally {
    failed = await finishBench(cleanup, root, failed);
  }
  if (failed) throw failed;
  writeResults("gateway", results);
}

exitWhenDone(main());
