/**
 * Issue 8's isolation tests, each one a test, on real parts: three tenants with real control planes
 * (local provisioner, defaults, the protection policy), the data plane (syncer, vn-agents, kwok),
 * PostgreSQL, SharingPolicy objects in the super cluster, the kube gateway on its HTTPS listener
 * with the live grants, the real kubectl, and /ws/logs and /ws/exec with the real stream checks.
 *
 * acme shares with globex: read pods and their logs in namespace `shared`. globex's member may do
 * exactly that — and nothing else, anywhere; initech sees nothing and cannot tell acme exists; a
 * revoke or an expiry ends every path and every open stream within seconds.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import WebSocket from "ws";
import { recordAudit } from "@/server/audit/service";
import { localSuperCluster } from "@/server/cluster/local";
import { CommandError, type RunResult, run } from "@/server/cluster/process";
import { simulatedPodLogFile } from "@/server/cluster/simulated-pods";
import type { SessionUser } from "@/server/core/roles";
import type { ServerFrame } from "@/server/core/stream-protocol";
import { createObject, deleteObject, serverSideApply } from "@/server/k8s/apply";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest, kubeRequestText } from "@/server/k8s/transport";
import { createKubeconfigService } from "@/server/kubeconfigs/service";
import { createLogger } from "@/server/logger";
import { authenticateStream } from "@/server/streams/authenticate";
import { createExecEndpoint } from "@/server/streams/exec";
import { createLogsEndpoint } from "@/server/streams/logs";
import { createUpgradeHandler } from "@/server/streams/upgrade";
import { superNamespace } from "@/server/syncer/naming";
import { kubeUserName, roleGroup } from "@/server/tenants/kube-identity";
import { createTokenService } from "@/server/tokens/service";
import { createUserRepository } from "@/server/users/repository";
import { type DataPlaneWorld, startDataPlaneWorld } from "@/test/integration/data-plane-world";
import { createKubeGateway, type KubeGateway } from "../gateway/gateway";
import { type GatewayListener, startGatewayListener } from "../gateway/listener";
import { ensureGatewayTls } from "../gateway/tls";
import { liveSharing } from "./access";
import { specHash } from "./grants";
import { grantRbacManifests, grantRbacName } from "./rbac";
import { type SharingPolicyResource, type SharingSpec, sharingAnnotations, sharingPath } from "./types";

const logger = createLogger({ service: "sharing-isolation-it" }, "error");
/** How long open streams took to end after a revoke: logged, never asserted (shared machine). */
const timings = createLogger({ service: "sharing-isolation-it" }, "info");
const superStateDir = inject("superStateDir");
const suffix = Math.random().toString(36).slice(2, 7);
const acme = `acme-${suffix}`;
const globex = `globex-${suffix}`;
const initech = `initech-${suffix}`;
const origin = "http://localhost:3999";

let world: DataPlaneWorld;
let workDir = "";
let kubectlBinary = "";
let gateway: KubeGateway | undefined;
let listener: GatewayListener | undefined;
let streams: http.Server | undefined;
let streamsBase = "";
/** Kubeconfigs by name: `acme` (acme's admin), `globex@acme` (globex's member, server = acme). */
const kubeconfigs: Record<string, string> = {};
let member: SessionUser;
let memberToken = "";
let initechToken = "";
let endpoint = { gatewayUrl: "", caPem: "" };

/** kubectl's discovery cache is per kubeconfig file: one identity never reads another's cache. */
const cacheOf = (kubeconfig: string) => path.join(workDir, "cache", path.basename(kubeconfig));

/** kubectl's stderr without its log-line prefixes (timestamps, pids), to compare answers. */
const normalised = (stderr: string) => stderr.replace(/^[EIW]\d{4} [\d:.]+\s+\d+ /gm, "");

async function kubectlWith(kubeconfig: string, args: string[]): Promise<RunResult> {
  try {
    return await run(
      kubectlBinary,
      ["--kubeconfig", kubeconfig, "--cache-dir", cacheOf(kubeconfig), ...args],
      { timeoutMs: 60_000, env: { PATH: process.env.PATH ?? "", HOME: workDir } },
    );
  } catch (error) {
    if (error instanceof CommandError) return error.result;
    throw error;
  }
}

const kubectl = (who: string, args: string[]) => kubectlWith(kubeconfigs[who] as string, args);

/** A kubeconfig for `token` against `tenant`'s gateway path (what "Shared with me" hands out). */
function kubeconfigAt(tenant: string, token: string, name: string): string {
  const file = path.join(workDir, `${name}.kubeconfig`);
  fs.writeFileSync(
    file,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{name: c, cluster: {server: '${endpoint.gatewayUrl}/k8s/tenants/${tenant}', certificate-authority-data: ${Buffer.from(endpoint.caPem).toString("base64")}}}]`,
      `users: [{name: u, user: {token: '${token}'}}]`,
      "contexts: [{name: c, context: {cluster: c, user: u}}]",
      "current-context: c",
    ].join("\n"),
    { mode: 0o600 },
  );
  return file;
}

const grantName = (short: string) => `${acme}.${short}`;

function readPodsAndLogs(namespaces = ["shared"]): SharingSpec["rules"] {
  return [
    { namespaces, apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
    { namespaces, apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
  ];
}

/**
 * A grant as Ring0 writes it when no approval is needed, and its RBAC in acme's control plane as
 * the sharing controller keeps it.
 */
async function grant(
  short: string,
  spec: Partial<SharingSpec> = {},
  approved = true,
): Promise<SharingPolicyResource> {
  const full: SharingSpec = {
    ownerTenant: acme,
    grantees: [{ tenant: globex }],
    rules: readPodsAndLogs(),
    purpose: "globex on-call reads our pods",
    // The default operator policy wants an expiry (at most 90 days).
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    ...spec,
  };
  const object: SharingPolicyResource = {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "SharingPolicy",
    metadata: {
      name: grantName(short),
      annotations: approved
        ? {
            [sharingAnnotations.approvedSpec]: specHash(full),
            [sharingAnnotations.approvedBy]: "test",
          }
        : {},
    },
    spec: full,
  };
  await createObject(world.superCluster, object);
  for (const manifest of grantRbacManifests(object)) {
    await serverSideApply(world.admin[acme] as never, manifest, { force: true });
  }
  return object;
}

async function revoke(short: string): Promise<void> {
  await kubeRequest(world.superCluster, {
    method: "PATCH",
    path: `${sharingPath}/${grantName(short)}`,
    contentType: "application/merge-patch+json",
    body: {
      metadata: {
        annotations: {
          [sharingAnnotations.revokedAt]: new Date().toISOString(),
          [sharingAnnotations.revokedBy]: "test",
        },
      },
    },
  });
}

async function removeGrant(short: string): Promise<void> {
  await deleteObject(world.superCluster, {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "SharingPolicy",
    metadata: { name: grantName(short) },
  }).catch(() => {});
}

interface Opened {
  frames: ServerFrame[];
  closed: Promise<{ code: number; reason: string }>;
  socket: WebSocket;
}

function openStream(pathAndQuery: string, token: string): Opened {
  const socket = new WebSocket(`${streamsBase}${pathAndQuery}`, {
    headers: { authorization: `Bearer ${token}`, origin },
  });
  const frames: ServerFrame[] = [];
  socket.on("message", (data: Buffer, isBinary) => {
    if (!isBinary) frames.push(JSON.parse(data.toString()) as ServerFrame);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() }));
    socket.on("error", () => {});
  });
  return { frames, closed, socket };
}

function refusedStream(pathAndQuery: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${streamsBase}${pathAndQuery}`, {
      headers: { authorization: `Bearer ${token}`, origin },
    });
    socket.on("unexpected-response", (_request, response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
      );
    });
    socket.on("open", () => {
      socket.close();
      reject(new Error(`the upgrade of ${pathAndQuery} was accepted`));
    });
    socket.on("error", () => {});
  });
}

const logsOf = (tenant: string, namespace: string, pod: string) =>
  `/ws/logs?source=tenant-pod&tenant=${tenant}&namespace=${namespace}&pod=${pod}&follow=true&tailLines=10`;

/** A long-running kubectl (watch, logs -f) and the promise of its exit. */
function spawnKubectl(
  who: string,
  args: string[],
): { child: ChildProcess; exited: Promise<number | null>; out: () => string } {
  const child: ChildProcess = spawn(
    kubectlBinary,
    ["--kubeconfig", kubeconfigs[who] as string, "--cache-dir", cacheOf(kubeconfigs[who] as string), ...args],
    { env: { ...process.env, HOME: workDir }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, out: () => out };
}

beforeAll(async () => {
  world = await startDataPlaneWorld({ tenants: [acme, globex, initech], logger, name: "sharing" });
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-sharing-home-"));
  kubectlBinary = await localSuperCluster({ stateDir: superStateDir, logger }).kubectlPath();

  const tokenService = createTokenService({ db: world.db });
  gateway = createKubeGateway({
    authenticate: (plaintext) => tokenService.verifyToken(plaintext),
    directory: () => world.directory,
    limits: { ratePerSecond: 1000, burst: 1000, maxLongRunning: 20 },
    audit: recordAudit,
    logger,
    sharing: liveSharing(),
  });
  const tls = await ensureGatewayTls({ stateDir: workDir });
  listener = await startGatewayListener({ gateway, tls, port: 0, logger });
  endpoint = { gatewayUrl: `https://localhost:${listener.port}`, caPem: tls.caPem as string };

  // Streams as the runtime serves them: the real authentication (bearer tokens here) and checks.
  const handler = createUpgradeHandler({
    allowedOrigins: [origin],
    authenticate: authenticateStream,
    endpoints: {
      "/ws/logs": createLogsEndpoint({ bufferBytes: 1 << 20, idleMs: 60_000, maxSessionMs: 600_000 }),
      "/ws/exec": createExecEndpoint({ bufferBytes: 1 << 20, idleMs: 60_000, maxSessionMs: 600_000 }),
    },
    maxPayload: 1 << 20,
    logger,
  });
  streams = http.createServer((_request, response) => response.writeHead(404).end());
  streams.on("upgrade", (request, socket, head) => handler.handle(request, socket, head));
  await new Promise<void>((resolve) => streams?.listen(0, "127.0.0.1", resolve));
  streamsBase = `ws://127.0.0.1:${(streams.address() as AddressInfo).port}`;

  // globex's member (a grantee), and initech's admin (a third tenant).
  const identity = {
    subject: `${globex}:${globex}-member`,
    tenant: globex,
    name: "Gus Member",
    role: "tenant-member" as const,
    email: null,
  };
  member = { ...identity, id: (await createUserRepository(world.db).recordSignIn(identity, new Date())).id };
  memberToken = (
    await tokenService.issueToken({ user: member, tenant: globex, name: "grantee", expiresInDays: 1 })
  ).plaintext;
  initechToken = world.tokens[initech] as string;

  const kubeconfigService = createKubeconfigService({ db: world.db, gateway: endpoint });
  const issued = await kubeconfigService.issueKubeconfig({
    user: world.users[acme] as SessionUser,
    tenant: acme,
    expiresInDays: 1,
  });
  kubeconfigs.acme = path.join(workDir, "acme.kubeconfig");
  fs.writeFileSync(kubeconfigs.acme, issued.kubeconfig, { mode: 0o600 });
  kubeconfigs["globex@acme"] = kubeconfigAt(acme, memberToken, "globex-at-acme");
  kubeconfigs["globex@initech"] = kubeconfigAt(initech, memberToken, "globex-at-initech");
  kubeconfigs["initech@acme"] = kubeconfigAt(acme, initechToken, "initech-at-acme");
  kubeconfigs["globex@nowhere"] = kubeconfigAt(`nowhere-${suffix}`, memberToken, "globex-at-nowhere");

  // acme's namespace `shared` with a running pod, another in `default`, a config map and a secret.
  expect((await kubectl("acme", ["create", "namespace", "shared"])).stderr).toBe("");
  // Pods are admitted once the namespace's default service account exists (made a moment later).
  await eventually(async () => {
    const found = await kubectl("acme", ["get", "serviceaccount", "default", "-n", "shared", "-o", "name"]);
    return found.code === 0 ? true : undefined;
  }, 60_000);
  for (const args of [
    ["run", "web", "--image=nginx", "-n", "shared"],
    ["run", "private", "--image=nginx", "-n", "default"],
    ["create", "configmap", "settings", "-n", "shared", "--from-literal=a=b"],
    ["create", "secret", "generic", "keys", "-n", "shared", "--from-literal=a=b"],
  ]) {
    const result = await kubectl("acme", args);
    expect(result.stderr).toBe("");
  }
  await eventually(async () => {
    const got = await kubectl("acme", [
      "get",
      "pod",
      "web",
      "-n",
      "shared",
      "-o",
      "jsonpath={.status.phase}",
    ]);
    return got.stdout === "Running" ? true : undefined;
  }, 120_000);
}, 300_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (streams ? streams.close(() => resolve()) : resolve()));
  await listener?.close();
  gateway?.close();
  await world?.stop();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
}, 180_000);

describe("sharing isolation", { timeout: 120_000 }, () => {
  describe("with a live grant: read pods and logs in `shared`", () => {
    beforeAll(async () => {
      await grant("oncall");
    }, 60_000);
    afterAll(async () => {
      await removeGrant("oncall");
    });

    it("the grantee lists the shared pods and reads a log with kubectl through the gateway", async () => {
      const pods = await eventually(async () => {
        const result = await kubectl("globex@acme", ["get", "pods", "-n", "shared", "-o", "name"]);
        return result.code === 0 ? result : undefined;
      }, 20_000);
      expect(pods.stdout.trim()).toBe("pod/web");
      const logsFile = simulatedPodLogFile(superStateDir, superNamespace(acme, "shared"), "web");
      await eventually(async () => (fs.existsSync(logsFile) ? true : undefined), 60_000);
      fs.appendFileSync(logsFile, `${new Date().toISOString()} stdout F shared-line-${suffix}\n`);
      const logs = await eventually(async () => {
        const result = await kubectl("globex@acme", ["logs", "web", "-n", "shared"]);
        return result.stdout.includes(`shared-line-${suffix}`) ? result : undefined;
      }, 30_000);
      expect(logs.code).toBe(0);
    });

    it("the grantee is refused in other namespaces", async () => {
      const result = await kubectl("globex@acme", ["get", "pods", "-n", "default"]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`does not include list pods in namespace "default"`);
      const one = await kubectl("globex@acme", ["get", "pod", "private", "-n", "default"]);
      expect(one.code).not.toBe(0);
      expect(one.stderr).toMatch(/forbidden/i);
    });

    it("the grantee is refused other verbs on the shared pods", async () => {
      for (const args of [
        ["delete", "pod", "web", "-n", "shared", "--wait=false"],
        ["label", "pod", "web", "-n", "shared", "x=y"],
        ["run", "intruder", "--image=nginx", "-n", "shared"],
        ["exec", "web", "-n", "shared", "--", "echo", "hi"],
      ]) {
        const result = await kubectl("globex@acme", args);
        expect(result.code, args.join(" ")).not.toBe(0);
        expect(result.stderr, args.join(" ")).toMatch(/forbidden/i);
      }
      const still = await kubectl("acme", [
        "get",
        "pod",
        "web",
        "-n",
        "shared",
        "-o",
        "jsonpath={.metadata.labels}",
      ]);
      expect(still.stdout).not.toContain('"x"');
    });

    it("the grantee is refused other resources in the shared namespace", async () => {
      for (const resource of ["configmaps", "secrets", "services", "deployments", "rolebindings", "events"]) {
        const result = await kubectl("globex@acme", ["get", resource, "-n", "shared"]);
        expect(result.code, resource).not.toBe(0);
        expect(result.stderr, resource).toMatch(/forbidden/i);
      }
    });

    it("the grantee is refused cluster-scoped resources and lists across namespaces", async () => {
      for (const args of [
        ["get", "nodes"],
        ["get", "namespaces"],
        ["get", "namespace", "shared"],
        ["get", "pods", "-A"],
        ["get", "clusterroles"],
      ]) {
        const result = await kubectl("globex@acme", args);
        expect(result.code, args.join(" ")).not.toBe(0);
        expect(result.stderr, args.join(" ")).toMatch(/forbidden/i);
      }
    });

    it("the grant reaches no other tenant: the grantee's token at initech reads like a missing tenant", async () => {
      const atInitech = await kubectl("globex@initech", ["get", "pods", "-n", "shared"]);
      const atNowhere = await kubectl("globex@nowhere", ["get", "pods", "-n", "shared"]);
      expect(atInitech.code).not.toBe(0);
      expect(normalised(atInitech.stderr).replaceAll(initech, "<t>")).toBe(
        normalised(atNowhere.stderr).replaceAll(`nowhere-${suffix}`, "<t>"),
      );
    });

    it("a third tenant cannot discover the owner: initech at acme reads exactly like a tenant that does not exist", async () => {
      const atAcme = await kubectl("initech@acme", ["get", "pods", "-n", "shared"]);
      const nowhere = kubeconfigAt(`nowhere-${suffix}`, initechToken, "initech-at-nowhere");
      const atNowhere = await kubectlWith(nowhere, ["get", "pods", "-n", "shared"]);
      expect(atAcme.code).not.toBe(0);
      expect(normalised(atAcme.stderr).replaceAll(acme, "<t>")).toBe(
        normalised(atNowhere.stderr).replaceAll(`nowhere-${suffix}`, "<t>"),
      );
      const discovery = await kubectl("initech@acme", ["api-resources"]);
      expect(discovery.code).not.toBe(0);
      // A stream says the same.
      const refused = await refusedStream(logsOf(acme, "shared", "web"), initechToken);
      expect(refused.status).toBe(404);
      expect(refused.body).toContain("was not found");
    });

    it("the grantee follows a shared pod's log over /ws/logs, and is refused other pods and shells", async () => {
      const opened = openStream(logsOf(acme, "shared", "web"), memberToken);
      await eventually(
        async () => (opened.frames.some((frame) => frame.type === "lines") ? true : undefined),
        30_000,
      );
      opened.socket.close();
      const other = await refusedStream(logsOf(acme, "default", "private"), memberToken);
      expect(other.status).toBe(403);
      expect(JSON.parse(other.body).error).toContain(
        `does not include get pods/log "private" in namespace "default"`,
      );
      const shell = await refusedStream(
        `/ws/exec?source=tenant-pod&tenant=${acme}&namespace=shared&pod=web&shell=sh`,
        memberToken,
      );
      expect(shell.status).toBe(403);
    });

    it("a tenant admin of the owner cannot edit Ring0's RBAC for the grant", async () => {
      const name = grantRbacName(grantName("oncall"));
      for (const args of [
        ["delete", "rolebinding", name, "-n", "shared"],
        ["label", "role", name, "-n", "shared", "extra=true"],
        [
          "patch",
          "role",
          name,
          "-n",
          "shared",
          "--type=json",
          '-p=[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}}]',
        ],
      ]) {
        const result = await kubectl("acme", args);
        expect(result.code, args.join(" ")).not.toBe(0);
        expect(result.stderr, args.join(" ")).toContain("managed by Ring0");
      }
    });

    it("RBAC the owner adds for the grantee outside the grant changes nothing: the gateway still refuses", async () => {
      const admin = world.admin[acme];
      if (!admin) throw new Error("no admin connection");
      // acme's admin gives globex's member a pod reader in `default` themselves (their right in acme).
      const asAdmin = {
        "Impersonate-User": kubeUserName(acme, "admin"),
        "Impersonate-Group": roleGroup(acme, "admin"),
      };
      const role = await kubeRequestText(admin, {
        method: "POST",
        path: "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
        body: {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: "extra-for-globex" },
          rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] }],
        },
        headers: asAdmin,
      });
      expect(role.status, role.text).toBe(201);
      const binding = await kubeRequestText(admin, {
        method: "POST",
        path: "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        body: {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "extra-for-globex" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "extra-for-globex" },
          subjects: [
            {
              apiGroup: "rbac.authorization.k8s.io",
              kind: "User",
              name: kubeUserName(globex, member.subject),
            },
          ],
        },
        headers: asAdmin,
      });
      expect(binding.status, binding.text).toBe(201);
      const result = await kubectl("globex@acme", ["get", "pods", "-n", "default"]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain("does not include list pods");
    });

    it("a grant cannot be used to create more grants or to grant RBAC", async () => {
      for (const args of [
        [
          "create",
          "rolebinding",
          "more",
          "-n",
          "shared",
          "--clusterrole=edit",
          `--user=${kubeUserName(globex, "other")}`,
        ],
        ["create", "role", "more", "-n", "shared", "--verb=get", "--resource=pods"],
        ["auth", "can-i", "--list", "-n", "shared"],
      ]) {
        const result = await kubectl("globex@acme", args);
        expect(result.code, args.join(" ")).not.toBe(0);
        expect(result.stderr, args.join(" ")).toMatch(/forbidden/i);
      }
    });

    it("use is audited under the owner, with the grant named", async () => {
      const events = await eventually(async () => {
        const found = await world.db.auditEvent.findMany({
          where: { tenant: acme, action: "share.used", actorTenant: globex },
        });
        return found.length > 0 ? found : undefined;
      }, 10_000);
      expect(events.some((event) => (event.detail as { grant?: string }).grant === grantName("oncall"))).toBe(
        true,
      );
      const status = await eventually(async () => {
        const got = await kubeRequest<SharingPolicyResource>(world.superCluster, {
          path: `${sharingPath}/${grantName("oncall")}`,
        });
        return got.status?.lastUsedAt ? got.status : undefined;
      }, 10_000);
      expect(new Date(status.lastUsedAt ?? 0).getTime()).toBeGreaterThan(Date.now() - 300_000);
    });
  });

  it("a grant waiting for approval gives nothing", async () => {
    await grant("pending", {}, false);
    try {
      const result = await kubectl("globex@acme", ["get", "pods", "-n", "shared"]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain("not found");
    } finally {
      await removeGrant("pending");
    }
  });

  it("an approved grant beyond the operator policy in force gives nothing (the default policy wants an expiry)", async () => {
    await grant("forever", { expiresAt: undefined });
    try {
      const result = await kubectl("globex@acme", ["get", "pods", "-n", "shared"]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain("not found");
    } finally {
      await removeGrant("forever");
    }
  });

  it("after revoke every path is denied within seconds and open streams close", async () => {
    await grant("revoked");
    await eventually(async () => {
      const result = await kubectl("globex@acme", ["get", "pods", "-n", "shared"]);
      return result.code === 0 ? true : undefined;
    }, 20_000);
    const watch = spawnKubectl("globex@acme", ["get", "pods", "-n", "shared", "-w"]);
    const follow = spawnKubectl("globex@acme", ["logs", "-f", "web", "-n", "shared"]);
    const stream = openStream(logsOf(acme, "shared", "web"), memberToken);
    await eventually(async () => (watch.out().includes("web") ? true : undefined), 20_000);
    await eventually(async () => (stream.frames.length > 0 ? true : undefined), 20_000);

    const revokedAt = Date.now();
    await revoke("revoked");
    // Each open stream ends on its own (the test's timeout bounds the wait); how long each took is logged.
    const took =
      (what: string) =>
      <T>(value: T): T => {
        timings.info("open stream ended after a revoke", { stream: what, ms: Date.now() - revokedAt });
        return value;
      };
    const [, , closed] = await Promise.all([
      watch.exited.then(took("kubectl get -w")),
      follow.exited
        .then(took("kubectl logs -f"))
        .then(() => timings.info("kubectl logs -f said", { output: follow.out().slice(-400) })),
      stream.closed.then(took("/ws/logs")),
    ]);
    expect(closed.code).toBe(4403);
    expect(stream.frames.some((frame) => frame.type === "error" && frame.message.includes("revoked"))).toBe(
      true,
    );

    const after = await kubectl("globex@acme", ["get", "pods", "-n", "shared"]);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toContain("not found");
    const refused = await refusedStream(logsOf(acme, "shared", "web"), memberToken);
    expect(refused.status).toBe(404);
    await removeGrant("revoked");
  });

  it("at expiry every path is denied and open streams close, with no change to the grant", async () => {
    const expiresAt = new Date(Date.now() + 12_000).toISOString();
    await grant("expiring", { expiresAt });
    await eventually(async () => {
      const result = await kubectl("globex@acme", ["get", "pods", "-n", "shared"]);
      return result.code === 0 ? true : undefined;
    }, 10_000);
    const watch = spawnKubectl("globex@acme", ["get", "pods", "-n", "shared", "-w"]);
    const stream = openStream(logsOf(acme, "shared", "web"), memberToken);
    await eventually(async () => (stream.frames.length > 0 ? true : undefined), 10_000);
    const [, closed] = await Promise.all([watch.exited, stream.closed]);
    expect(Date.now()).toBeGreaterThanOrEqual(new Date(expiresAt).getTime());
    expect(closed.code).toBe(4403);
    const after = await kubectl("globex@acme", ["get", "pods", "-n", "shared"]);
    expect(after.code).not.toBe(0);
    await removeGrant("expiring");
  });
});
