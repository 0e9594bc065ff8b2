/**
 * The kube gateway against the real things: PostgreSQL (tokens, audit), the run's local super
 * cluster standing in for tenant gw-a's control plane, and the real kubectl binary.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from "vitest";
import { recordAudit } from "@/server/audit/service";
import { localSuperCluster } from "@/server/cluster/local";
import { localNodeName } from "@/server/cluster/nodes";
import { CommandError, type RunResult, run } from "@/server/cluster/process";
import { SIMULATED_POD_LABEL, startSimulatedPodLogs } from "@/server/cluster/simulated-pods";
import type { SessionUser } from "@/server/core/roles";
import { createPrismaClient, disconnectDb, type PrismaClient, setDatabaseUrl } from "@/server/db/client";
import { createObject, deleteObject, type KubeObject } from "@/server/k8s/apply";
import { eventually, testNamespace, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { setGatewayEndpoint } from "@/server/kubeconfigs/gateway-endpoint";
import { createKubeconfigService } from "@/server/kubeconfigs/service";
import { createLogger } from "@/server/logger";
import type { ControlPlaneDirectory, ControlPlaneLookup } from "@/server/tenants/control-planes";
import { tokenPrefix } from "@/server/tokens/format";
import { createTokenService } from "@/server/tokens/service";
import { signInTenantAdmin, superClusterAccess } from "@/test/integration/control-plane-access";
import { testDatabaseUrl } from "@/test/integration/database";
import { writeGatewayKubeconfig } from "@/test/integration/gateway-kubeconfig";
import { createKubeGateway, type GatewaySharing, type KubeGateway, type KubeGatewayLimits } from "./gateway";
import { type GatewayListener, startGatewayListener } from "./listener";
import { httpsGet } from "./test-https";
import { ensureGatewayTls } from "./tls";

const conn = testSuperCluster();
const stateDir = inject("superStateDir");
const logger = createLogger({}, "warn");
const runId = Math.random().toString(36).slice(2, 7);

let db: PrismaClient;
const users: Record<string, SessionUser> = {};
const tokens: Record<string, string> = {};
let kubectlBinary = "";
let workDir = "";
let namespace = "";
let deleteNamespace: () => Promise<void> = async () => {};
let binder: ReturnType<typeof startSimulatedPodLogs> | undefined;
const lookups: string[] = [];
const servers: Array<{ servers: http.Server[]; listeners: GatewayListener[]; gateway: KubeGateway }> = [];
/** Plain HTTP, for requests written by hand. */
let base = "";
/** HTTPS, for kubectl: client-go sends bearer tokens only over TLS. */
let secureBase = "";
/** The CA of the HTTPS listener's certificate (Ring0's own gateway CA). */
let gatewayCa = "";

const directory: ControlPlaneDirectory = {
  async lookup(tenant): Promise<ControlPlaneLookup> {
    lookups.push(tenant);
    if (tenant === "gw-a" || tenant === "gw-b") return { state: "ready", access: superClusterAccess(conn) };
    if (tenant === "gw-down")
      return { state: "unavailable", phase: "Provisioning", message: "etcd is starting" };
    return { state: "absent" };
  },
};

/** One gateway behind a plain HTTP listener and the runtime's HTTPS listener; returns both base URLs. */
async function startGateway(
  limits: KubeGatewayLimits,
  sharing?: GatewaySharing,
): Promise<{ plain: string; secure: string }> {
  const tokenService = createTokenService({ db });
  const gateway = createKubeGateway({
    authenticate: (plaintext) => tokenService.verifyToken(plaintext),
    directory: () => directory,
    limits,
    sharing,
    audit: recordAudit,
    logger,
  });
  // Ring0's own gateway CA and serving certificate (localhost, 127.0.0.1), as the runtime makes them.
  const tls = await ensureGatewayTls({ stateDir: workDir });
  gatewayCa = tls.caPem as string;
  const server = http.createServer((request, response) => gateway.handleRequest(request, response));
  server.on("upgrade", (request, socket, head) => gateway.handleUpgrade(request, socket, head));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // The runtime's HTTPS listener: kubectl sends bearer tokens only over TLS.
  const listener = await startGatewayListener({ gateway, tls, port: 0, logger });
  servers.push({ servers: [server], listeners: [listener], gateway });
  const plain = (server.address() as AddressInfo).port;
  return { plain: `http://127.0.0.1:${plain}`, secure: `https://127.0.0.1:${listener.port}` };
}

function kubeconfigFor(tenant: string, token: string): string {
  const file = path.join(workDir, `${tenant}-${token.slice(0, 10)}.kubeconfig`);
  return writeGatewayKubeconfig(file, { gatewayUrl: secureBase, caPem: gatewayCa, tenant, token });
}

/** kubectl through the gateway as gw-a's admin; a non-zero exit is returned, not thrown. */
async function kubectl(args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  const kubeconfig = kubeconfigFor("gw-a", tokens.a as string);
  try {
    return await run(
      kubectlBinary,
      ["--kubeconfig", kubeconfig, "--cache-dir", path.join(workDir, "cache"), ...args],
      {
        timeoutMs: 30_000,
        env: { PATH: process.env.PATH, HOME: workDir, ...env },
      },
    );
  } catch (error) {
    if (error instanceof CommandError) return error.result;
    throw error;
  }
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A GET on the gateway's HTTPS listener, verified by Ring0's CA: its status and body. */
function secureGet(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(secureBase);
  return httpsGet({ hostname, port: Number(port), path }, gatewayCa, headers);
}

function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; at?: string } = {},
): Promise<Answer> {
  const target = new URL(options.at ?? base);
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      {
        hostname: target.hostname,
        port: target.port,
        method: options.method ?? "GET",
        // Sent exactly as written: Node does not normalise the path.
        path: url,
        headers: options.headers,
      },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      },
    );
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}

const bearer = (token: string | undefined) => ({ authorization: `Bearer ${token}` });

async function auditEvents(action: string, tenant = "gw-a") {
  return db.auditEvent.findMany({ where: { action, tenant }, orderBy: { at: "asc" } });
}

beforeAll(async () => {
  const url = await testDatabaseUrl();
  db = createPrismaClient(url);
  setDatabaseUrl(url); // recordAudit writes through the process-wide client
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-gateway-"));
  kubectlBinary = await localSuperCluster({ stateDir, logger }).kubectlPath();

  const service = createTokenService({ db });
  for (const tenant of ["gw-a", "gw-b", "gw-gone", "gw-down"])
    users[tenant] = await signInTenantAdmin(db, tenant);
  const issue = async (tenant: string, name: string) =>
    (await service.issueToken({ user: users[tenant] as SessionUser, tenant, name, expiresInDays: 1 }))
      .plaintext;
  tokens.a = await issue("gw-a", "kubectl");
  tokens.b = await issue("gw-b", "kubectl");
  tokens.gone = await issue("gw-gone", "kubectl");
  tokens.down = await issue("gw-down", "kubectl");
  const revoked = await service.issueToken({
    user: users["gw-a"] as SessionUser,
    tenant: "gw-a",
    name: "old",
    expiresInDays: 1,
  });
  await service.revokeToken(revoked.token.id, users["gw-a"] as SessionUser);
  tokens.revoked = revoked.plaintext;
  const past = new Date(Date.now() - 3 * 86_400_000);
  tokens.expired = (
    await createTokenService({ db, now: () => past }).issueToken({
      user: users["gw-a"] as SessionUser,
      tenant: "gw-a",
      name: "expired",
      expiresInDays: 1,
    })
  ).plaintext;

  [namespace, deleteNamespace] = await testNamespace(conn, `gw-${runId}`);
  // Enough for `kubectl get ns`, nothing more: the tenant group may read namespaces cluster-wide.
  await createObject(conn, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: `ring0-gw-test-${runId}` },
    rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] }],
  });
  await createObject(conn, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: `ring0-gw-test-${runId}` },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `ring0-gw-test-${runId}` },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "ring0:tenant:gw-a" }],
  });
  ({ plain: base, secure: secureBase } = await startGateway({
    ratePerSecond: 1000,
    burst: 1000,
    maxLongRunning: 20,
  }));
}, 120_000);

afterAll(async () => {
  binder?.stop();
  for (const { servers: plain, listeners, gateway } of servers) {
    for (const server of plain) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    for (const listener of listeners) await listener.close();
    gateway.close();
  }
  const rbac = { apiVersion: "rbac.authorization.k8s.io/v1", metadata: { name: `ring0-gw-test-${runId}` } };
  await deleteObject(conn, { ...rbac, kind: "ClusterRoleBinding" }).catch(() => undefined);
  await deleteObject(conn, { ...rbac, kind: "ClusterRole" }).catch(() => undefined);
  await deleteNamespace();
  fs.rmSync(workDir, { recursive: true, force: true });
  await disconnectDb();
  await db?.$disconnect();
}, 60_000);

describe("a kubeconfig from Ring0 on the gateway's HTTPS listener", () => {
  it("works with kubectl unchanged: verified TLS, the token, the impersonated user", async () => {
    const port = new URL(secureBase).port;
    // What the runtime sets at start-up; the kubeconfig service (portal, CLI, tRPC) reads it.
    setGatewayEndpoint({ gatewayUrl: `https://localhost:${port}`, caPem: gatewayCa });
    onTestFinished(() => setGatewayEndpoint(null));
    const issued = await createKubeconfigService({ db }).issueKubeconfig({
      user: users["gw-a"] as SessionUser,
      tenant: "gw-a",
      expiresInDays: 1,
    });
    expect(issued.kubeconfig).toContain(`server: "https://localhost:${port}/k8s/tenants/gw-a"`);
    expect(issued.kubeconfig).toContain("certificate-authority-data:");
    expect(issued.kubeconfig).not.toMatch(/insecure/);
    const file = path.join(workDir, "issued.kubeconfig");
    fs.writeFileSync(file, issued.kubeconfig, { mode: 0o600 });
    const env = { PATH: process.env.PATH, HOME: workDir, KUBECONFIG: file };

    const namespaces = await run(kubectlBinary, ["get", "ns", "-o", "name"], { timeoutMs: 30_000, env });
    expect(namespaces.stdout).toContain(`namespace/${namespace}`);
    const whoami = await run(kubectlBinary, ["auth", "whoami", "-o", "json"], { timeoutMs: 30_000, env });
    const review = JSON.parse(whoami.stdout) as {
      status: { userInfo: { username: string; groups: string[] } };
    };
    expect(review.status.userInfo.username).toBe("gw-a:gw-a-admin");
    expect(review.status.userInfo.groups).toContain("ring0:tenant:gw-a");
    expect(review.status.userInfo.groups).not.toContain("system:masters");
  });

  it("serves only the gateway: anything else is a 404 Status", async () => {
    const answer = await secureGet("/portal/health");
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: "Status", code: 404, reason: "NotFound" });
  });
});

describe("kubectl through the kube gateway", () => {
  it("lists namespaces of the tenant's control plane", async () => {
    const result = await kubectl(["get", "ns", "-o", "name"]);
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain(`namespace/${namespace}`);
  });

  it("serves paths without the tenant's prefix (kubectl get --raw, kubectl proxy) as the token's own tenant", async () => {
    const raw = await kubectl(["get", "--raw", "/api/v1/namespaces"]);
    expect(raw.stderr).toBe("");
    expect(raw.stdout).toContain(`"name":"${namespace}"`);
    // gw-b's token reaches gw-b's own control plane that way, never gw-a's (whose namespace it is).
    const other = await secureGet("/api/v1/namespaces", bearer(tokens.b));
    // gw-b's user may not list namespaces there: its own API server says so, naming gw-b's user.
    expect(other.status).toBe(403);
    expect(JSON.parse(other.body).message).toMatch(/^namespaces is forbidden: User "gw-b:/);
    expect(other.body).not.toContain(namespace);
    // Without a token: the gateway's 401, nothing looked up.
    expect((await secureGet("/api/v1/namespaces")).status).toBe(401);
  });

  it("acts as the impersonated Ring0 user, not as the gateway's admin identity", async () => {
    const whoami = await kubectl(["auth", "whoami", "-o", "json"]);
    const review = JSON.parse(whoami.stdout) as {
      status: { userInfo: { username: string; groups: string[] } };
    };
    expect(review.status.userInfo.username).toBe("gw-a:gw-a-admin");
    expect(review.status.userInfo.groups).toEqual(
      expect.arrayContaining(["ring0:tenant:gw-a", "ring0:tenant:gw-a:admins"]),
    );
    expect(review.status.userInfo.groups).not.toContain("system:masters");

    const canI = await kubectl(["auth", "can-i", "create", "configmaps", "-n", namespace]);
    expect(canI.stdout.trim()).toBe("no");
    // kubectl's own --as sends Impersonate-User: refused with a reason, never answered as the caller.
    const asAdmin = await kubectl([
      "auth",
      "can-i",
      "create",
      "configmaps",
      "-n",
      namespace,
      "--as",
      "system:admin",
      "--as-group",
      "system:masters",
    ]);
    expect(asAdmin.code).not.toBe(0);
    expect(asAdmin.stdout.trim()).not.toBe("yes");
    expect(asAdmin.stderr).toContain("does not pass on impersonation");
  });

  it("follows the tenant's RBAC: a RoleBinding for the tenant group turns can-i to yes", async () => {
    await createObject(conn, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "ring0-tenant-admins", namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "ring0:tenant:gw-a" }],
    });
    const canI = await eventually(async () => {
      const result = await kubectl(["auth", "can-i", "create", "configmaps", "-n", namespace]);
      return result.stdout.trim() === "yes" ? result.stdout.trim() : undefined;
    });
    expect(canI).toBe("yes");
  });

  it("streams a watch: an event arrives, then the client stops it", async () => {
    const kubeconfig = kubeconfigFor("gw-a", tokens.a as string);
    let output = "";
    const watcher: ChildProcess = spawn(
      kubectlBinary,
      [
        "--kubeconfig",
        kubeconfig,
        "--cache-dir",
        path.join(workDir, "cache"),
        "get",
        "configmaps",
        "-n",
        namespace,
        "--watch",
        "-o",
        "name",
      ],
      {
        env: { PATH: process.env.PATH ?? "", HOME: workDir, NODE_ENV: "test" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    watcher.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      // The initial list (kube-root-ca.crt), then an event for an object created while watching.
      await eventually(() => output.includes("configmap/kube-root-ca.crt") || undefined);
      await createObject(conn, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "watched", namespace },
        data: { a: "1" },
      });
      await eventually(() => output.includes("configmap/watched") || undefined);
    } finally {
      watcher.kill();
    }
  });

  it("applies and deletes a ConfigMap, and both are audited", async () => {
    const manifest = path.join(workDir, "configmap.yaml");
    fs.writeFileSync(
      manifest,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: ${namespace}\ndata:\n  hello: world\n`,
    );
    const applied = await kubectl(["apply", "-f", manifest]);
    expect(applied.stdout.trim()).toBe("configmap/applied created");
    const stored = await kubeRequest<{ data: Record<string, string> }>(conn, {
      path: `/api/v1/namespaces/${namespace}/configmaps/applied`,
    });
    expect(stored.data).toEqual({ hello: "world" });

    const deleted = await kubectl(["delete", "configmap", "applied", "-n", namespace]);
    expect(deleted.stdout.trim()).toMatch(/^configmap "applied" deleted/);

    const created = await eventually(async () =>
      (await auditEvents("k8s.create")).find(
        (event) => event.target === `/api/v1/namespaces/${namespace}/configmaps`,
      ),
    );
    expect(created).toMatchObject({
      actorId: users["gw-a"]?.id,
      actorTenant: "gw-a",
      tenant: "gw-a",
      targetKind: "k8s-api",
      result: "success",
    });
    expect(created.detail).toMatchObject({
      method: "POST",
      status: 201,
      tokenPrefix: tokenPrefix(tokens.a as string),
      userAgent: expect.stringContaining("kubectl"),
    });
    const removed = await eventually(async () =>
      (await auditEvents("k8s.delete")).find(
        (event) => event.target === `/api/v1/namespaces/${namespace}/configmaps/applied`,
      ),
    );
    expect(removed).toMatchObject({ result: "success", detail: expect.objectContaining({ status: 200 }) });
  });

  it("audits a mutation the tenant's RBAC refuses as denied", async () => {
    const refused = await kubectl(["create", "namespace", `gw-refused-${runId}`]);
    expect(refused.stderr).toMatch(/forbidden/i);
    expect(refused.stderr).toContain("gw-a:gw-a-admin");
    const event = await eventually(async () =>
      (await auditEvents("k8s.create")).find((candidate) => candidate.target === "/api/v1/namespaces"),
    );
    expect(event).toMatchObject({ result: "denied", detail: expect.objectContaining({ status: 403 }) });
  });

  it("runs kubectl exec over WebSockets and over SPDY, audited as k8s.exec", {
    timeout: 120_000,
  }, async () => {
    binder = startSimulatedPodLogs(conn, { stateDir, logger });
    const pod: KubeObject = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "shell", namespace, labels: { [SIMULATED_POD_LABEL]: "true" } },
      spec: { nodeName: localNodeName(0), containers: [{ name: "app", image: "registry.invalid/app:1" }] },
    };
    await createObject(conn, pod);
    await eventually(async () => {
      const current = await kubeRequest<{ status?: { phase?: string } }>(conn, {
        path: `/api/v1/namespaces/${namespace}/pods/shell`,
      });
      return current.status?.phase === "Running";
    }, 30_000);

    const overWebSockets = await eventually(async () => {
      const result = await kubectl(["exec", "-n", namespace, "shell", "--", "sh", "-c", "echo via-gateway"]);
      return result.stdout.includes("via-gateway") ? result.stdout : undefined;
    }, 40_000);
    expect(overWebSockets.trim()).toBe("via-gateway");

    const overSpdy = await kubectl(["exec", "-n", namespace, "shell", "--", "sh", "-c", "echo via-spdy"], {
      KUBECTL_REMOTE_COMMAND_WEBSOCKETS: "false",
    });
    expect(overSpdy.stdout.trim()).toBe("via-spdy");

    const exec = await eventually(async () =>
      (await auditEvents("k8s.exec")).find(
        (event) =>
          event.target === `/api/v1/namespaces/${namespace}/pods/shell/exec` && event.result === "success",
      ),
    );
    expect(exec.detail).toMatchObject({ status: 101, tokenPrefix: tokenPrefix(tokens.a as string) });
  });
});

describe("the gateway over plain HTTP", () => {
  const api = (tenant: string, rest = "/api/v1/namespaces") => `/k8s/tenants/${tenant}${rest}`;

  it("answers 401 with a Kubernetes Status for a missing, garbage, revoked or expired token", async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      bearer("r0_garbage"),
      bearer("not-even-a-token"),
      bearer(tokens.revoked),
      bearer(tokens.expired),
      { cookie: `token=${tokens.a}` },
      { authorization: `Basic ${Buffer.from(`x:${tokens.a}`).toString("base64")}` },
    ];
    for (const headers of attempts) {
      const answer = await request(api("gw-a"), { headers });
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body)).toMatchObject({
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        reason: "Unauthorized",
        code: 401,
      });
    }
  });

  it("answers another tenant's path exactly as a tenant that does not exist", async () => {
    const before = lookups.length;
    const otherTenant = await request(api("gw-b"), { headers: bearer(tokens.a) });
    // gw-b exists and serves; gw-a's token must not learn that.
    expect(lookups.length).toBe(before);
    const absent = await request(api("gw-gone"), { headers: bearer(tokens.gone) });
    expect(otherTenant.status).toBe(404);
    expect(absent.status).toBe(404);
    expect(otherTenant.body.replace("gw-b", "X")).toBe(absent.body.replace("gw-gone", "X"));
    const strip = ({ date: _date, "content-length": _length, ...headers }: http.IncomingHttpHeaders) =>
      headers;
    expect(strip(otherTenant.headers)).toEqual(strip(absent.headers));
    // gw-b's own token does reach it.
    expect((await request(api("gw-b", "/version"), { headers: bearer(tokens.b) })).status).toBe(200);
  });

  it("answers 503 with the phase for a control plane that is not serving", async () => {
    const answer = await request(api("gw-down"), { headers: bearer(tokens.down) });
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toMatchObject({
      reason: "ServiceUnavailable",
      message: expect.stringContaining("Provisioning): etcd is starting"),
    });
  });

  it("tells a grantee only the phase of an owner's control plane that is not serving, not why", async () => {
    // The grant decision itself is the sharing suites' (server/sharing); here gw-a's users hold a
    // grant on gw-down, so the request reaches the control plane lookup.
    const granted = (
      await startGateway(
        { ratePerSecond: 1000, burst: 1000, maxLongRunning: 4 },
        {
          verdict: async (user, owner) =>
            user.tenant === "gw-a" && owner === "gw-down"
              ? { kind: "allowed", grant: "gw-down.test" }
              : { kind: "no-grant" },
          watch: () => () => {},
          recordUse: () => {},
        },
      )
    ).plain;
    const answer = await request(api("gw-down", "/api/v1/namespaces/shared/pods"), {
      headers: bearer(tokens.a),
      at: granted,
    });
    expect(answer.status).toBe(503);
    const status = JSON.parse(answer.body) as { message: string };
    expect(status.message).toBe(
      'The control plane of tenant "gw-down" is not serving right now (Provisioning); try again later.',
    );
    expect(answer.body).not.toContain("etcd is starting");
    // The owner's own users still read why.
    const own = await request(api("gw-down", "/api/v1/namespaces/shared/pods"), {
      headers: bearer(tokens.down),
      at: granted,
    });
    expect(JSON.parse(own.body).message).toContain("etcd is starting");
  });

  it("refuses forged paths before looking anything up", async () => {
    const before = lookups.length;
    for (const [forged, status] of [
      ["/k8s/tenants/gw-a/api/v1/namespaces%2F..%2F..%2Fgw-b", 400],
      ["/k8s/tenants/gw-a/../gw-b/api/v1/namespaces", 400],
      ["/k8s/tenants/gw-a/api/%2e%2e/%2e%2e/api/v1/namespaces", 400],
      ["/k8s/tenants/gw-a%2F..%2Fgw-b/api/v1/namespaces", 400],
      ["/k8s/tenants/GW-A/api/v1/namespaces", 404],
      ["/k8s/tenants//api/v1/namespaces", 400],
      ["/k8s/elsewhere", 404],
    ] as const) {
      const answer = await request(forged, { headers: bearer(tokens.a) });
      expect(answer.status, forged).toBe(status);
      expect(JSON.parse(answer.body)).toMatchObject({ kind: "Status", code: status });
    }
    expect(lookups.length).toBe(before);
  });

  it("refuses impersonation asked by the client, and ignores front-proxy identity headers", async () => {
    const review = (headers: Record<string, string>) =>
      request(api("gw-a", "/apis/authentication.k8s.io/v1/selfsubjectreviews"), {
        method: "POST",
        headers: { ...bearer(tokens.a), "content-type": "application/json", ...headers },
        body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }),
      });
    const forgeries: Record<string, string>[] = [
      { "Impersonate-User": "system:admin" },
      { "impersonate-group": "system:masters" },
      { "IMPERSONATE-UID": "0" },
      { "Impersonate-Extra-Scopes": "all" },
    ];
    for (const forged of forgeries) {
      const refused = await review(forged);
      expect(refused.status, JSON.stringify(forged)).toBe(403);
      expect(JSON.parse(refused.body)).toMatchObject({
        kind: "Status",
        reason: "Forbidden",
        message: expect.stringContaining("does not pass on impersonation"),
      });
    }

    const answer = await review({ "X-Remote-User": "system:admin", "X-Remote-Group": "system:masters" });
    expect(answer.status).toBe(201);
    const userInfo = (
      JSON.parse(answer.body) as { status: { userInfo: { username: string; groups: string[] } } }
    ).status.userInfo;
    expect(userInfo.username).toBe("gw-a:gw-a-admin");
    expect(userInfo.groups).not.toContain("system:masters");
  });

  it("relays the tenant API server's refusal of an upgrade", async () => {
    const answer = await new Promise<Answer>((resolve, reject) => {
      const target = new URL(base);
      const outgoing = http.request({
        hostname: target.hostname,
        port: target.port,
        method: "POST",
        path: api("gw-a", `/api/v1/namespaces/${namespace}/pods/missing/exec?command=ls&stdout=true`),
        headers: {
          ...bearer(tokens.a),
          connection: "Upgrade",
          upgrade: "SPDY/3.1",
          "x-stream-protocol-version": "v4.channel.k8s.io",
        },
      });
      outgoing.on("upgrade", () => reject(new Error("unexpected upgrade")));
      outgoing.on("response", (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => {
          body += chunk.toString();
        });
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      });
      outgoing.on("error", reject);
      outgoing.end();
    });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: "Status", reason: "NotFound" });
    const event = await eventually(async () =>
      (await auditEvents("k8s.exec")).find((candidate) => candidate.target?.endsWith("/pods/missing/exec")),
    );
    expect(event).toMatchObject({ result: "failure", detail: expect.objectContaining({ status: 404 }) });
  });

  it("refuses an upgrade without a valid token before any lookup", async () => {
    const before = lookups.length;
    const answer = await new Promise<number>((resolve, reject) => {
      const target = new URL(base);
      const outgoing = http.request({
        hostname: target.hostname,
        port: target.port,
        path: api("gw-a", `/api/v1/namespaces/${namespace}/pods/shell/exec?command=ls&stdout=true`),
        headers: { connection: "Upgrade", upgrade: "websocket", "Impersonate-User": "system:admin" },
      });
      outgoing.on("upgrade", () => reject(new Error("unexpected upgrade")));
      outgoing.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      outgoing.on("error", reject);
      outgoing.end();
    });
    expect(answer).toBe(401);
    expect(lookups.length).toBe(before);
  });

  it("caps concurrent watches per token and frees a slot when a watch ends", async () => {
    const capped = (await startGateway({ ratePerSecond: 1000, burst: 1000, maxLongRunning: 1 })).plain;
    const target = new URL(capped);
    const openWatch = () =>
      new Promise<{ status: number; close: () => void; firstLine: Promise<string> }>((resolve, reject) => {
        const outgoing = http.request({
          hostname: target.hostname,
          port: target.port,
          path: api("gw-a", `/api/v1/namespaces?watch=1&fieldSelector=metadata.name%3D${namespace}`),
          headers: bearer(tokens.a),
        });
        outgoing.on("response", (response) => {
          const firstLine = new Promise<string>((lineResolve) => {
            let buffered = "";
            response.on("data", (chunk: Buffer) => {
              buffered += chunk.toString();
              if (buffered.includes("\n")) lineResolve(buffered.split("\n")[0] as string);
            });
          });
          resolve({ status: response.statusCode ?? 0, close: () => outgoing.destroy(), firstLine });
        });
        outgoing.on("error", () => undefined);
        outgoing.on("close", () => reject(new Error("closed before a response")));
        outgoing.end();
      });

    const first = await openWatch();
    expect(first.status).toBe(200);
    // The watch streams: its first event arrives while the response is still open.
    expect(JSON.parse(await first.firstLine)).toMatchObject({
      type: "ADDED",
      object: { metadata: { name: namespace } },
    });
    const second = await openWatch();
    expect(second.status).toBe(429);
    second.close();
    // Ordinary requests are not long-running and still pass.
    expect((await request(api("gw-a", "/version"), { at: capped, headers: bearer(tokens.a) })).status).toBe(
      200,
    );
    first.close();
    const third = await eventually(async () => {
      const attempt = await openWatch();
      if (attempt.status === 200) return attempt;
      attempt.close();
      return undefined;
    });
    third.close();
  });

  it("rate-limits per token with 429, Retry-After and a Status, audited once per window", async () => {
    const limited = (await startGateway({ ratePerSecond: 0.001, burst: 2, maxLongRunning: 1 })).plain;
    const statuses: number[] = [];
    let last: Answer | undefined;
    for (let attempt = 0; attempt < 6; attempt++) {
      last = await request(api("gw-b", "/version"), { at: limited, headers: bearer(tokens.b) });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
    expect(Number(last?.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(last?.body ?? "")).toMatchObject({
      kind: "Status",
      reason: "TooManyRequests",
      code: 429,
      details: { retryAfterSeconds: Number(last?.headers["retry-after"]) },
    });
    // Another token has its own bucket.
    expect((await request(api("gw-a", "/version"), { at: limited, headers: bearer(tokens.a) })).status).toBe(
      200,
    );

    const denied = await eventually(async () => {
      const events = await auditEvents("k8s.gateway-denied", "gw-b");
      return events.length > 0 ? events : undefined;
    });
    expect(denied).toHaveLength(1);
    expect(denied[0]).toMatchObject({ result: "denied", detail: expect.objectContaining({ status: 429 }) });
  });
});
