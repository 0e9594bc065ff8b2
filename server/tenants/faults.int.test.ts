/**
 * Faults, on real parts: a tenant with a real local control plane behind the tenant controller (and
 * its watchdog) and the kube gateway, with a tenant admin writing ConfigMaps through the gateway
 * all along. Each component (kube-apiserver, etcd, kube-controller-manager) is killed with SIGKILL
 * mid-traffic; the tenant must turn Degraded (condition, Warning Event), the gateway must answer a
 * clear 503 meanwhile (never a 502), the component must come back on its own, and every write the
 * gateway acknowledged must still be there.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAudit } from "@/server/audit/service";
import type { SessionUser } from "@/server/core/roles";
import { createPrismaClient, disconnectDb, type PrismaClient, setDatabaseUrl } from "@/server/db/client";
import { createKubeGateway } from "@/server/gateway/gateway";
import { createObject, deleteObject, readObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { listEventsFor } from "@/server/k8s/events";
import { eventually, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { createLocalProvisioner } from "@/server/provisioners/local";
import { componentStates, type LocalComponent } from "@/server/provisioners/local/components";
import { tenantPaths } from "@/server/provisioners/local/paths";
import type { Provisioner } from "@/server/provisioners/types";
import { informerTenantSource } from "@/server/runtime/tenants";
import { createTokenService } from "@/server/tokens/service";
import { signInTenantAdmin } from "@/test/integration/control-plane-access";
import { testDatabaseUrl } from "@/test/integration/database";
import { createControlPlaneDirectory } from "./control-planes";
import { startTenantController } from "./controller";
import { type Condition, conditionOf, type TenantStatus } from "./status";
import { type TenantResource, tenantApiVersion, tenantKind } from "./tenant-resources";

const logger = createLogger({ service: "faults-it" }, (process.env.FAULTS_LOG as "info") ?? "error");
const tenant = `ft-${Date.now().toString(36).slice(-5)}`;
const tenantRef = { apiVersion: tenantApiVersion, kind: tenantKind, metadata: { name: tenant } };
let superCluster: ClusterConnection;
let stateDir: string;
let provisioner: Provisioner;
let controller: ReturnType<typeof startTenantController>;
let source: ReturnType<typeof informerTenantSource>;
let db: PrismaClient;
let server: http.Server;
let base = "";
let token = "";

const readTenant = () => readObject<TenantResource>(superCluster, tenantRef);
const statusOf = async () => (await readTenant()).status as TenantStatus | undefined;

/** A request through the gateway as the tenant's admin. */
function gateway(
  method: string,
  apiPath: string,
  body?: unknown,
): Promise<{ status: number; body: string; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(base);
    const request = http.request(
      {
        hostname: target.hostname,
        port: target.port,
        method,
        path: `/k8s/tenants/${tenant}${apiPath}`,
        headers: {
          authorization: `Bearer ${token}`,
          accept: "application/json",
          ...(body ? { "content-type": "application/json" } : {}),
        },
        timeout: 20_000,
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            body: text,
            retryAfter: response.headers["retry-after"] as string | undefined,
          }),
        );
      },
    );
    request.on("timeout", () => request.destroy(new Error("timed out")));
    request.on("error", reject);
    request.end(body ? JSON.stringify(body) : undefined);
  });
}

/** Writes ConfigMaps through the gateway every 50 ms until stopped; remembers what was acknowledged. */
function writer(prefix: string) {
  const acknowledged: string[] = [];
  const answers: { status: number; body: string; retryAfter?: string }[] = [];
  let stopped = false;
  const done = (async () => {
    for (let i = 0; !stopped; i++) {
      const name = `${prefix}-${i}`;
      const answer = await gateway("POST", "/api/v1/namespaces/default/configmaps", {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name },
        data: { i: String(i) },
      }).catch((error: Error) => ({ status: 0, body: error.message }));
      answers.push(answer);
      if (answer.status === 201) acknowledged.push(name);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    acknowledged,
    answers,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

function pidOf(component: LocalComponent): number {
  const paths = tenantPaths(path.join(stateDir, "tenants"), tenant);
  return Number(fs.readFileSync(path.join(paths.clusterDir, "pids", `${component}.pid`), "utf8").trim());
}

/** Watches the Tenant's status every 100 ms: every phase and Degraded condition seen, in order. */
function statusWatch() {
  const phases: string[] = [];
  const degraded: Condition[] = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const status = await statusOf().catch(() => undefined);
      const phase = status?.phase ?? "";
      if (phases.at(-1) !== phase) phases.push(phase);
      const condition = conditionOf(status, "Degraded");
      if (condition && JSON.stringify(degraded.at(-1)) !== JSON.stringify(condition))
        degraded.push(condition);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    phases,
    degraded,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** The tenant turns Degraded (within `foundWithinMs`), then Ready again with Degraded=False/Recovered. */
async function degradedThenRecovered(watch: ReturnType<typeof statusWatch>, foundWithinMs: number) {
  await eventually(async () => expect(watch.phases).toContain("Degraded"), foundWithinMs);
  await eventually(async () => {
    const status = await statusOf();
    expect(status?.phase).toBe("Ready");
    expect(conditionOf(status, "Degraded")).toMatchObject({ status: "False", reason: "Recovered" });
    return true;
  }, 60_000);
}

beforeAll(async () => {
  const url = await testDatabaseUrl();
  db = createPrismaClient(url);
  setDatabaseUrl(url);
  const user: SessionUser = await signInTenantAdmin(db, tenant);
  token = (await createTokenService({ db }).issueToken({ user, tenant, name: "faults", expiresInDays: 1 }))
    .plaintext;

  superCluster = testSuperCluster();
  await installCrds(superCluster, logger);
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-faults-it-"));
  provisioner = createLocalProvisioner({ stateDir, logger, vnAgentStateDir: false });
  controller = startTenantController(superCluster, {
    superCluster,
    provisioners: { local: provisioner },
    defaultProvisioner: "local",
    logger,
    pollMs: 300,
  });
  source = informerTenantSource(superCluster);
  const directory = createControlPlaneDirectory({
    tenants: source,
    provisioners: { local: provisioner },
    defaultProvisioner: "local",
  });
  const tokens = createTokenService({ db });
  const kubeGateway = createKubeGateway({
    authenticate: (plaintext) => tokens.verifyToken(plaintext),
    directory: () => directory,
    limits: { ratePerSecond: 1000, burst: 1000, maxLongRunning: 20 },
    audit: recordAudit,
    logger,
  });
  server = http.createServer((request, response) => kubeGateway.handleRequest(request, response));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  await createObject(superCluster, {
    ...tenantRef,
    spec: { displayName: "Faults", admins: [`${tenant}-admin`], controlPlane: { provisioner: "local" } },
  });
  await eventually(async () => expect((await statusOf())?.phase).toBe("Ready"), 180_000);
  // The admin's RBAC from the defaults is in place: a first write goes through.
  await eventually(
    async () =>
      expect(
        (
          await gateway("POST", "/api/v1/namespaces/default/configmaps", {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "before" },
          })
        ).status,
      ).toBe(201),
    30_000,
  );
}, 240_000);

afterAll(async () => {
  await controller?.stop();
  source?.release();
  await deleteObject(superCluster, tenantRef).catch(() => undefined);
  await kubeRequest(superCluster, {
    method: "PATCH",
    path: `/apis/${tenantApiVersion}/tenants/${tenant}`,
    body: { metadata: { finalizers: [] } },
    contentType: "application/merge-patch+json",
  }).catch(() => undefined);
  await provisioner?.destroy(tenant);
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  fs.rmSync(stateDir, { recursive: true, force: true });
  await disconnectDb();
  await db?.$disconnect();
}, 120_000);

describe.each(["kube-apiserver", "etcd", "kube-controller-manager"] as const)(
  "a tenant whose %s is killed mid-traffic",
  (component) => {
    it("turns Degraded at once, answers 503 meanwhile, heals itself and loses no acknowledged write", async () => {
      expect((await statusOf())?.phase).toBe("Ready");
      const watch = statusWatch();
      const writes = writer(`${component}-cm`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const pid = pidOf(component);
      process.kill(pid, "SIGKILL");

      try {
        // Degraded, with the component named, then Ready again with how long it took.
        await degradedThenRecovered(watch, 30_000);
        // Serving: a write goes through again.
        await eventually(async () => expect(writes.acknowledged.length).toBeGreaterThan(0), 10_000);
        const count = writes.answers.length;
        await eventually(async () => {
          expect(writes.answers.length).toBeGreaterThan(count);
          expect(writes.answers.at(-1)?.status).toBe(201);
          return true;
        }, 20_000);
      } finally {
        await writes.stop();
        await watch.stop();
      }

      // The component runs again, as a new process.
      const paths = tenantPaths(path.join(stateDir, "tenants"), tenant);
      expect(componentStates(paths)[component]).toBe("running");
      expect(pidOf(component)).not.toBe(pid);

      const [found] = watch.degraded.filter((condition) => condition.status === "True");
      expect(found).toMatchObject({
        reason:
          { "kube-apiserver": "KubeApiserverExited", etcd: "EtcdExited" }[component as string] ??
          "KubeControllerManagerExited",
        message: expect.stringContaining(`${component} exited`),
      });
      expect(watch.phases.slice(watch.phases.indexOf("Degraded"))).toContain("Ready");

      // 201s, clear 503s and, while etcd is away, the API server's own 500/504: never a 502, never
      // a dropped connection.
      const statuses = new Set(writes.answers.map((answer) => answer.status));
      for (const status of statuses) expect([201, 503, 500, 504]).toContain(status);
      for (const answer of writes.answers.filter((candidate) => candidate.status === 503)) {
        // Retried by kubectl only when safe: refused (never sent) or told by the directory;
        // a write cut off mid-way says to check before retrying, with no Retry-After.
        if (answer.body.includes("may or may not have been applied"))
          expect(answer.retryAfter).toBeUndefined();
        else {
          expect(answer.body).toMatch(/is not serving \(Degraded|is not answering right now/);
          expect(answer.retryAfter).toBe("2");
        }
        // The tenant's users never read a host path or a log line.
        expect(answer.body).not.toMatch(/\/tmp\/|\.log|last line/);
      }
      if (component === "kube-apiserver") expect(statuses.has(503)).toBe(true);

      // Every acknowledged write is there.
      const listed = await gateway("GET", "/api/v1/namespaces/default/configmaps");
      expect(listed.status).toBe(200);
      const names = new Set(
        (JSON.parse(listed.body) as { items: { metadata: { name: string } }[] }).items.map(
          (item) => item.metadata.name,
        ),
      );
      for (const name of writes.acknowledged) expect(names).toContain(name);

      // The Warning Event and the recovery Event.
      const object = await readTenant();
      const events = await listEventsFor(superCluster, {
        kind: tenantKind,
        name: tenant,
        uid: object.metadata.uid,
      });
      const reasons = events.map((event) => event.reason);
      expect(reasons).toContain("Degraded");
      expect(reasons).toContain("Recovered");
    }, 180_000);
  },
);

describe("a tenant whose kube-apiserver hangs (SIGSTOP)", () => {
  it("is found by its readiness probe, turns Degraded, and gets a new API server", async () => {
    expect((await statusOf())?.phase).toBe("Ready");
    const watch = statusWatch();
    const pid = pidOf("kube-apiserver");
    process.kill(pid, "SIGSTOP");
    try {
      await degradedThenRecovered(watch, 60_000);
    } finally {
      await watch.stop();
      // Never leave a stopped process behind, whatever happened.
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone: Ring0 killed it
      }
    }
    const [found] = watch.degraded.filter((condition) => condition.status === "True");
    expect(found).toMatchObject({
      reason: "KubeApiserverUnresponsive",
      message: expect.stringContaining("kube-apiserver does not answer its readiness check"),
    });
    expect(pidOf("kube-apiserver")).not.toBe(pid);
    expect((await gateway("GET", "/api/v1/namespaces/default/configmaps?limit=1")).status).toBe(200);
  }, 180_000);
});

describe("after the faults", () => {
  it("the controller manager works again: a Deployment gets its ReplicaSet", async () => {
    const created = await gateway("POST", "/apis/apps/v1/namespaces/default/deployments", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "after-faults" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "after-faults" } },
        template: {
          metadata: { labels: { app: "after-faults" } },
          spec: { containers: [{ name: "web", image: "localhost/ring0/httpd:1" }] },
        },
      },
    });
    expect(created.status).toBe(201);
    await eventually(async () => {
      const sets = await gateway("GET", "/apis/apps/v1/namespaces/default/replicasets");
      expect(sets.status).toBe(200);
      expect((JSON.parse(sets.body) as { items: unknown[] }).items.length).toBeGreaterThan(0);
      return true;
    }, 60_000);
  });
});
