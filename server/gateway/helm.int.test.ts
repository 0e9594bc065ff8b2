/**
 * `helm template <chart> | kubectl apply -f -` through the kube gateway, with the real things: helm
 * built from the Go module proxy (scripts/helm-build.sh), the real kubectl (scripts/kube-build.sh),
 * PostgreSQL (tokens, audit) and the run's local super cluster standing in for tenant helm-a's
 * control plane. The chart is test/fixtures/charts/demo (a ConfigMap, a Deployment, a Service).
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAudit } from "@/server/audit/service";
import { run } from "@/server/cluster/process";
import type { SessionUser } from "@/server/core/roles";
import { createPrismaClient, disconnectDb, type PrismaClient, setDatabaseUrl } from "@/server/db/client";
import { createObject } from "@/server/k8s/apply";
import { eventually, testNamespace, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest, kubeRequestText } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import type { ControlPlaneAccess } from "@/server/provisioners/types";
import type { ControlPlaneDirectory, ControlPlaneLookup } from "@/server/tenants/control-planes";
import { tokenPrefix } from "@/server/tokens/format";
import { createTokenService } from "@/server/tokens/service";
import { createUserRepository } from "@/server/users/repository";
import { testDatabaseUrl } from "@/test/integration/database";
import { writeGatewayKubeconfig } from "@/test/integration/gateway-kubeconfig";
import { createKubeGateway, type KubeGateway } from "./gateway";
import { type GatewayListener, startGatewayListener } from "./listener";
import { ensureGatewayTls } from "./tls";

const TENANT = "helm-a";
const CHART = path.resolve("test/fixtures/charts/demo");
/** helm's cold build takes minutes; the test command builds it first (helm-build stage). */
const HELM_BUILD_TIMEOUT_MS = 20 * 60_000;

const conn = testSuperCluster();
const logger = createLogger({}, "warn");

let db: PrismaClient;
let user: SessionUser;
let token = "";
let helmBinary = "";
let kubectlBinary = "";
/** HOME, caches and kubeconfig of helm and kubectl: never the repo or the real home. */
let workDir = "";
let kubeconfig = "";
let namespace = "";
let deleteNamespace: () => Promise<void> = async () => {};
let gateway: KubeGateway | undefined;
let listener: GatewayListener | undefined;

/** The super cluster's admin access, as a provisioner would hand it out. */
function superClusterAccess(): ControlPlaneAccess {
  const cluster = conn.kubeConfig.getCurrentCluster();
  const admin = conn.kubeConfig.getCurrentUser();
  const pem = (data: string | undefined, file: string | undefined) =>
    data ? Buffer.from(data, "base64").toString("utf8") : fs.readFileSync(file as string, "utf8");
  return {
    server: conn.server,
    ca: pem(cluster?.caData, cluster?.caFile),
    cert: pem(admin?.certData, admin?.certFile),
    key: pem(admin?.keyData, admin?.keyFile),
  };
}

const directory: ControlPlaneDirectory = {
  async lookup(tenant): Promise<ControlPlaneLookup> {
    return tenant === TENANT ? { state: "ready", access: superClusterAccess() } : { state: "absent" };
  },
};

/** The bin dir a build script reports with --print-dir; builds it first when it is not there (exit 3). */
async function binDir(script: string): Promise<string> {
  const lastLine = (text: string) => text.trim().split("\n").pop() ?? "";
  const printed = await run("bash", [script, "--print-dir"], { timeoutMs: 60_000 }).catch(
    (error: { result?: { code: number | null } }) => {
      if (error.result?.code === 3) return undefined;
      throw error;
    },
  );
  if (printed) return lastLine(printed.stdout);
  return lastLine((await run("bash", [script], { timeoutMs: HELM_BUILD_TIMEOUT_MS })).stdout);
}

/** helm and kubectl see only this: no host kubeconfig, no real home. */
function toolEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: workDir };
}

interface Piped {
  rendered: string;
  helm: { code: number | null; stderr: string };
  kubectl: { code: number | null; stdout: string; stderr: string };
}

/**
 * `helm template demo <chart> --namespace <ns> [helmArgs] | kubectl apply -f - [applyArgs]`, as
 * two processes with argument arrays, helm's stdout piped into kubectl's stdin here in Node.
 */
function helmTemplateApply(helmArgs: string[] = [], applyArgs: string[] = []): Promise<Piped> {
  const env = toolEnv() as NodeJS.ProcessEnv;
  const helm = spawn(helmBinary, ["template", "demo", CHART, "--namespace", namespace, ...helmArgs], {
    env,
    cwd: workDir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const kubectl = spawn(
    kubectlBinary,
    [
      "--kubeconfig",
      kubeconfig,
      "--cache-dir",
      path.join(workDir, "kube-cache"),
      "apply",
      "-f",
      "-",
      ...applyArgs,
    ],
    { env, cwd: workDir, stdio: ["pipe", "pipe", "pipe"] },
  );
  const output = { rendered: "", helmErr: "", stdout: "", stderr: "" };
  helm.stdout.on("data", (chunk: Buffer) => {
    output.rendered += chunk.toString("utf8");
  });
  helm.stdout.pipe(kubectl.stdin);
  // kubectl may exit before reading everything (e.g. a bad kubeconfig); that is its exit code's story.
  kubectl.stdin.on("error", () => undefined);
  helm.stderr.on("data", (chunk: Buffer) => {
    output.helmErr += chunk.toString("utf8");
  });
  kubectl.stdout.on("data", (chunk: Buffer) => {
    output.stdout += chunk.toString("utf8");
  });
  kubectl.stderr.on("data", (chunk: Buffer) => {
    output.stderr += chunk.toString("utf8");
  });
  const exited = (child: ChildProcess) =>
    new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code) => resolve(code));
    });
  const timer = setTimeout(() => {
    helm.kill("SIGKILL");
    kubectl.kill("SIGKILL");
  }, 60_000);
  return Promise.all([exited(helm), exited(kubectl)])
    .then(([helmCode, kubectlCode]) => ({
      rendered: output.rendered,
      helm: { code: helmCode, stderr: output.helmErr },
      kubectl: { code: kubectlCode, stdout: output.stdout, stderr: output.stderr },
    }))
    .finally(() => clearTimeout(timer));
}

/** kubectl's one line per object, sorted: e.g. `configmap/demo-config created`. */
const lines = (stdout: string) => stdout.trim().split("\n").sort();

const paths = () => ({
  configMap: `/api/v1/namespaces/${namespace}/configmaps/demo-config`,
  deployment: `/apis/apps/v1/namespaces/${namespace}/deployments/demo`,
  service: `/api/v1/namespaces/${namespace}/services/demo`,
});

/** Audit events of the tenant for an action whose target is one of the chart's objects or collections. */
async function chartAudit(action: string) {
  const events = await db.auditEvent.findMany({ where: { action, tenant: TENANT }, orderBy: { at: "asc" } });
  return events.filter(
    (event) =>
      event.target?.startsWith(`/api/v1/namespaces/${namespace}/`) ||
      event.target?.startsWith(`/apis/apps/v1/namespaces/${namespace}/`),
  );
}

async function exists(apiPath: string): Promise<boolean> {
  const { status } = await kubeRequestText(conn, { path: apiPath });
  if (status !== 200 && status !== 404) throw new Error(`GET ${apiPath}: ${status}`);
  return status === 200;
}

beforeAll(async () => {
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-helm-"));
  helmBinary = path.join(await binDir("scripts/helm-build.sh"), "helm");
  kubectlBinary = path.join(await binDir("scripts/kube-build.sh"), "kubectl");

  const url = await testDatabaseUrl();
  db = createPrismaClient(url);
  setDatabaseUrl(url); // recordAudit writes through the process-wide client
  const identity = {
    subject: `${TENANT}:${TENANT}-admin`,
    tenant: TENANT,
    name: `Admin of ${TENANT}`,
    role: "tenant-admin" as const,
    email: null,
  };
  const recorded = await createUserRepository(db).recordSignIn(identity, new Date());
  user = {
    id: recorded.id,
    subject: identity.subject,
    name: identity.name,
    email: null,
    tenant: TENANT,
    role: "tenant-admin",
  };
  const tokenService = createTokenService({ db });
  token = (await tokenService.issueToken({ user, tenant: TENANT, name: "helm", expiresInDays: 1 })).plaintext;

  [namespace, deleteNamespace] = await testNamespace(conn, "helm");
  // The tenant's RBAC: its group may administer the test namespace, nothing else.
  await createObject(conn, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "ring0-tenant-admins", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: `ring0:tenant:${TENANT}` }],
  });

  gateway = createKubeGateway({
    authenticate: (plaintext) => tokenService.verifyToken(plaintext),
    directory: () => directory,
    limits: { ratePerSecond: 1000, burst: 1000, maxLongRunning: 20 },
    audit: recordAudit,
    logger,
  });
  // Ring0's own gateway CA and serving certificate (localhost, 127.0.0.1), as the runtime makes them.
  const tls = await ensureGatewayTls({ stateDir: workDir });
  listener = await startGatewayListener({ gateway, tls, port: 0, logger });
  kubeconfig = writeGatewayKubeconfig(path.join(workDir, `${TENANT}.kubeconfig`), {
    gatewayUrl: `https://127.0.0.1:${listener.port}`,
    caPem: tls.caPem as string,
    tenant: TENANT,
    token,
  });
  // RBAC is cached briefly by the API server: wait until the tenant may create in the namespace.
  await eventually(async () => {
    const canI = await run(
      kubectlBinary,
      ["--kubeconfig", kubeconfig, "auth", "can-i", "create", "deployments.apps", "-n", namespace],
      { timeoutMs: 30_000, env: toolEnv() },
    ).catch(() => undefined);
    return canI?.stdout.trim() === "yes" || undefined;
  });
}, HELM_BUILD_TIMEOUT_MS + 120_000);

afterAll(async () => {
  await listener?.close();
  gateway?.close();
  await deleteNamespace().catch(() => undefined);
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  await disconnectDb();
  await db?.$disconnect();
}, 60_000);

describe("helm template | kubectl apply -f - through the kube gateway", () => {
  it("uses helm v3 built from the module proxy", async () => {
    const version = await run(helmBinary, ["version", "--template", "{{.Version}}"], {
      timeoutMs: 30_000,
      env: toolEnv(),
    });
    expect(version.stdout).toMatch(/^v3\.\d+\.\d+$/);
  });

  it("server-side dry run: kubectl reports the objects created, none exist", async () => {
    const dryRun = await helmTemplateApply([], ["--dry-run=server"]);
    expect(dryRun.helm).toEqual({ code: 0, stderr: "" });
    expect(dryRun.kubectl.stderr).toBe("");
    expect(dryRun.kubectl.code).toBe(0);
    expect(lines(dryRun.kubectl.stdout)).toEqual([
      "configmap/demo-config created (server dry run)",
      "deployment.apps/demo created (server dry run)",
      "service/demo created (server dry run)",
    ]);
    for (const apiPath of Object.values(paths())) expect(await exists(apiPath), apiPath).toBe(false);
    // The dry-run POSTs pass the gateway as creates too — one per object, marked as dry runs.
    const audited = await eventually(async () => {
      const events = await chartAudit("k8s.create");
      return events.length === 3 ? events : undefined;
    });
    for (const event of audited) expect(event.detail).toMatchObject({ dryRun: true });
  });

  it("applies the rendered chart as the tenant user; the objects exist with the chart's values", async () => {
    const applied = await helmTemplateApply();
    expect(applied.helm).toEqual({ code: 0, stderr: "" });
    // The chart rendered its three templates, in this namespace, through the helper.
    expect(applied.rendered).toContain("# Source: demo/templates/configmap.yaml");
    expect(applied.rendered).toContain("# Source: demo/templates/deployment.yaml");
    expect(applied.rendered).toContain("# Source: demo/templates/service.yaml");
    expect(applied.kubectl.stderr).toBe("");
    expect(applied.kubectl.code).toBe(0);
    expect(lines(applied.kubectl.stdout)).toEqual([
      "configmap/demo-config created",
      "deployment.apps/demo created",
      "service/demo created",
    ]);

    // Read back with the admin connection, not through the gateway.
    const { configMap, deployment, service } = paths();
    const labels = {
      "app.kubernetes.io/name": "demo",
      "app.kubernetes.io/instance": "demo",
      "app.kubernetes.io/managed-by": "Helm",
      "helm.sh/chart": "demo-0.1.0",
    };
    const storedConfig = await kubeRequest<{
      metadata: { labels: Record<string, string> };
      data: Record<string, string>;
    }>(conn, { path: configMap });
    expect(storedConfig.data).toEqual({ greeting: "hello from helm", port: "8080" });
    expect(storedConfig.metadata.labels).toMatchObject(labels);
    const storedDeployment = await kubeRequest<{
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: {
        replicas: number;
        template: {
          metadata: { annotations: Record<string, string> };
          spec: { containers: Array<{ image: string; envFrom: Array<{ configMapRef: { name: string } }> }> };
        };
      };
    }>(conn, { path: deployment });
    expect(storedDeployment.metadata.labels).toMatchObject(labels);
    expect(storedDeployment.spec.replicas).toBe(2);
    expect(storedDeployment.spec.template.spec.containers[0]?.image).toBe("registry.invalid/demo:1.0.0");
    expect(storedDeployment.spec.template.spec.containers[0]?.envFrom[0]?.configMapRef.name).toBe(
      "demo-config",
    );
    expect(storedDeployment.spec.template.metadata.annotations["checksum/config"]).toMatch(/^[0-9a-f]{64}$/);
    // kubectl's client-side apply keeps its last-applied configuration on the object.
    expect(storedDeployment.metadata.annotations).toHaveProperty(
      "kubectl.kubernetes.io/last-applied-configuration",
    );
    const storedService = await kubeRequest<{
      spec: {
        type: string;
        ports: Array<{ port: number; targetPort: string }>;
        selector: Record<string, string>;
      };
    }>(conn, { path: service });
    expect(storedService.spec.type).toBe("ClusterIP");
    expect(storedService.spec.ports).toEqual([expect.objectContaining({ port: 8080, targetPort: "http" })]);
    expect(storedService.spec.selector).toEqual({
      "app.kubernetes.io/name": "demo",
      "app.kubernetes.io/instance": "demo",
    });

    // Each create is in the audit log as the tenant's user, through the token: the dry run's and this one.
    const creates = await eventually(async () => {
      const events = await chartAudit("k8s.create");
      return events.length === 6 ? events : undefined;
    });
    expect(creates.map((event) => event.target).sort()).toEqual(
      [
        `/api/v1/namespaces/${namespace}/configmaps`,
        `/api/v1/namespaces/${namespace}/services`,
        `/apis/apps/v1/namespaces/${namespace}/deployments`,
      ].flatMap((target) => [target, target]),
    );
    for (const event of creates) {
      expect(event).toMatchObject({
        actorId: user.id,
        actorTenant: TENANT,
        tenant: TENANT,
        targetKind: "k8s-api",
        result: "success",
      });
      expect(event.detail).toMatchObject({
        method: "POST",
        status: 201,
        tokenPrefix: tokenPrefix(token),
        userAgent: expect.stringContaining("kubectl"),
      });
    }
  });

  it("a second apply of the same render changes nothing", async () => {
    const again = await helmTemplateApply();
    expect(again.helm.code).toBe(0);
    expect(again.kubectl.stderr).toBe("");
    expect(again.kubectl.code).toBe(0);
    expect(lines(again.kubectl.stdout)).toEqual([
      "configmap/demo-config unchanged",
      "deployment.apps/demo unchanged",
      "service/demo unchanged",
    ]);
  });

  it("a server-side dry run with other values reports the changes and leaves the objects as they were", async () => {
    const dryRun = await helmTemplateApply(
      ["--set", "greeting=changed", "--set", "replicaCount=3"],
      ["--dry-run=server"],
    );
    expect(dryRun.helm.code).toBe(0);
    expect(dryRun.kubectl.stderr).toBe("");
    expect(dryRun.kubectl.code).toBe(0);
    expect(lines(dryRun.kubectl.stdout)).toEqual([
      "configmap/demo-config configured (server dry run)",
      "deployment.apps/demo configured (server dry run)",
      "service/demo unchanged (server dry run)",
    ]);
    const { configMap, deployment } = paths();
    expect(
      (await kubeRequest<{ data: Record<string, string> }>(conn, { path: configMap })).data.greeting,
    ).toBe("hello from helm");
    expect(
      (await kubeRequest<{ spec: { replicas: number } }>(conn, { path: deployment })).spec.replicas,
    ).toBe(2);

    // The dry run's patches are audited; the unchanged second apply sent none.
    const patches = await eventually(async () => {
      const events = await chartAudit("k8s.patch");
      return events.length >= 2 ? events : undefined;
    });
    expect(patches.map((event) => event.target).sort()).toEqual([configMap, deployment]);
    expect(patches.every((event) => event.result === "success")).toBe(true);
  });
});
