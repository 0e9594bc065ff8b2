/**
 * The walls of hard multi-tenancy, attacked with real processes (issue 14). The world: the run's
 * local super cluster, two tenants with real control planes, the syncer, the vn-agents and the kube
 * gateway, wired as the runtime wires them. The attacker is a member of one tenant with an API token
 * and a pod of their own, and any unauthenticated process on this host.
 *
 * Other suites attack the other walls: escaping pod specs (server/syncer/isolation.int.test.ts),
 * open streams outliving their rights (server/gateway/stream-rights.int.test.ts), the browser's
 * Origin and body limits (server/api/http.int.test.ts), one tenant's users against another's
 * (server/sharing/isolation.int.test.ts, e2e/tenant-isolation.spec.ts).
 */
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAudit } from "@/server/audit/service";
import { ensureEtcdPki, ensureNodePki } from "@/server/cluster/hardening";
import { localSuperCluster } from "@/server/cluster/local";
import { CommandError, type RunResult, run } from "@/server/cluster/process";
import type { SessionUser } from "@/server/core/roles";
import { createKubeGateway, type KubeGateway } from "@/server/gateway";
import { type GatewayListener, startGatewayListener } from "@/server/gateway/listener";
import { ensureGatewayTls } from "@/server/gateway/tls";
import { serverSideApply } from "@/server/k8s/apply";
import { type ClusterConnection, connectCluster } from "@/server/k8s/cluster";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest, kubeRequestText } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { superNamespace } from "@/server/syncer/naming";
import { createTokenService } from "@/server/tokens/service";
import { createUserRepository } from "@/server/users/repository";
import { ensureVnAgentPki } from "@/server/vn-agent/pki";
import { type DataPlaneWorld, startDataPlaneWorld } from "@/test/integration/data-plane-world";
import { configMapWebhook } from "@/test/integration/extensions";
import { writeGatewayKubeconfig } from "@/test/integration/gateway-kubeconfig";
import {
  type ClusterPorts,
  hostListeners,
  httpsGet,
  plainHttp,
  probeScript,
  simKubeletPort,
  superClusterPorts,
  tcpOpen,
  tenantClusterPorts,
  tlsWithoutClientCertificate,
} from "@/test/walls";

const logger = createLogger({ service: "ring0-abuse-test" }, "warn");
const suffix = Date.now().toString(36).slice(-4);
const tenantA = `wa${suffix}`;
const tenantB = `wb${suffix}`;

let world: DataPlaneWorld;
let gateway: KubeGateway;
let listener: GatewayListener;
let workDir = "";
let kubectl = "";
let memberKubeconfig = "";
let ports: { super: ClusterPorts; a: ClusterPorts; b: ClusterPorts };
let gatewayCa = "";

/** kubectl as tenant A's member, through the gateway; a non-zero exit is returned, not thrown. */
async function asMember(args: string[], timeoutMs = 60_000): Promise<RunResult> {
  try {
    return await run(kubectl, ["--kubeconfig", memberKubeconfig, ...args], {
      timeoutMs,
      env: { PATH: process.env.PATH, HOME: workDir },
    });
  } catch (error) {
    if (error instanceof CommandError) return error.result;
    throw error;
  }
}

/** A shell script run in tenant A's pod as its member (kubectl exec through Ring0). */
async function inPod(script: string): Promise<string> {
  const result = await asMember(["exec", "attacker", "-n", "default", "--", "sh", "-c", script], 120_000);
  if (result.code !== 0) throw new Error(`exec failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

beforeAll(async () => {
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-abuse-"));
  world = await startDataPlaneWorld({ tenants: [tenantA, tenantB], logger, name: "abuse" });
  kubectl = await localSuperCluster({ stateDir: world.superStateDir, logger }).kubectlPath();
  ports = {
    super: superClusterPorts(world.superStateDir),
    a: tenantClusterPorts(world.stateDir, tenantA),
    b: tenantClusterPorts(world.stateDir, tenantB),
  };

  // The kube gateway as the runtime serves it: HTTPS, Ring0 tokens, impersonation.
  const tokens = createTokenService({ db: world.db });
  gateway = createKubeGateway({
    authenticate: (plaintext) => tokens.verifyToken(plaintext),
    directory: () => world.directory,
    limits: { ratePerSecond: 1000, burst: 1000, maxLongRunning: 20 },
    audit: recordAudit,
    logger,
  });
  const tls = await ensureGatewayTls({ stateDir: workDir });
  gatewayCa = tls.caPem as string;
  listener = await startGatewayListener({ gateway, tls, port: 0, logger });

  // Tenant A's member, signed in as the IAM would sign them in, with a token of their own.
  const identity = {
    subject: `${tenantA}:${tenantA}-member`,
    tenant: tenantA,
    name: "A member",
    role: "tenant-member" as const,
    email: null,
  };
  const user = await createUserRepository(world.db).recordSignIn(identity, new Date());
  const member: SessionUser = { ...identity, id: user.id };
  const token = (await tokens.issueToken({ user: member, tenant: tenantA, name: "abuse", expiresInDays: 1 }))
    .plaintext;
  memberKubeconfig = writeGatewayKubeconfig(path.join(workDir, "member.kubeconfig"), {
    gatewayUrl: `https://127.0.0.1:${listener.port}`,
    caPem: tls.caPem as string,
    tenant: tenantA,
    token,
    user: "member",
  });

  // The member's own pod (members may create pods: the tenant's `edit` role), synced down and running.
  const created = await asMember(["run", "attacker", "-n", "default", "--image=busybox", "--restart=Never"]);
  if (created.code !== 0) throw new Error(`kubectl run as the member failed: ${created.stderr}`);
  await eventually(async () => {
    const pod = await kubeRequest<{ status?: { phase?: string } }>(world.superCluster, {
      path: `/api/v1/namespaces/${superNamespace(tenantA, "default")}/pods/attacker`,
    }).catch(() => undefined);
    return pod?.status?.phase === "Running" ? true : undefined;
  }, 90_000);
}, 240_000);

afterAll(async () => {
  await listener?.close();
  gateway?.close();
  await world?.stop();
  fs.rmSync(workDir, { recursive: true, force: true });
}, 120_000);

describe("a tenant member's kubectl exec", () => {
  it("runs in a sandbox: nobody, no capabilities, its own processes, a read-only root without this host's files", async () => {
    const hostSecret = path.join(world.stateDir, "abuse-host-secret");
    fs.writeFileSync(hostSecret, "host secret", { mode: 0o644 });
    const out = await inPod(
      [
        "id -u",
        "grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status",
        "ls /proc | grep -c '^[0-9]'",
        "ls /",
        `cat ${hostSecret} 2>&1`,
        `ls ${world.superStateDir} 2>&1`,
        "touch /bin/planted 2>&1; unshare -U -r id 2>&1",
        "cat /proc/net/dev | tail -n +3 | cut -d: -f1",
      ].join("; echo ---; "),
    );
    const [uid, caps, processes, root, secret, superState, planted, interfaces] = out
      .split("---\n")
      .map((part) => part.trim());
    expect(uid).toBe("65534");
    expect(caps).toMatch(/CapEff:\s+0+\n/);
    expect(caps).toMatch(/CapBnd:\s+0+\n/);
    expect(caps).toMatch(/NoNewPrivs:\s+1/);
    expect(caps).toMatch(/Seccomp:\s+2/);
    expect(Number(processes)).toBeLessThan(6);
    expect(root?.split("\n")).toEqual(["bin", "dev", "etc", "home", "proc", "tmp", "usr"]);
    expect(secret).toMatch(/No such file or directory/);
    expect(superState).toMatch(/No such file or directory/);
    expect(planted).toMatch(/Read-only file system/);
    expect(planted).toMatch(/unshare.*Operation not permitted/);
    expect(interfaces).toBe("lo");
  });

  it("reaches nothing listening on this host: no etcd, no API server, no Ring0 service", async () => {
    const listening = hostListeners();
    const mustBeThere = [
      ports.super.etcdClient,
      ports.super.apiserver,
      ports.a.etcdClient,
      ports.b.etcdClient,
      ports.b.apiserver,
      simKubeletPort(world.superStateDir),
      listener.port,
      ...[...world.agents.endpoints().values()].map((endpoint) => endpoint.port),
    ];
    // The probe is meaningful: every one of these answers on this host right now.
    for (const port of mustBeThere) {
      expect(listening).toContain(port);
      expect(await tcpOpen(port)).toBe(true);
    }
    const out = await inPod(probeScript(listening));
    expect(out).toContain(`probed ${listening.length}`);
    expect(out.split("\n").filter((line) => line.startsWith("open "))).toEqual([]);
  });
});

describe("a tenant admin's webhooks", () => {
  it("reach nothing listening on this host: every listener, and a closed port, gets the same refusal", async () => {
    const admin = connectCluster("abuse-admin", {
      inline: fs.readFileSync(
        writeGatewayKubeconfig(path.join(workDir, "admin.kubeconfig"), {
          gatewayUrl: `https://127.0.0.1:${listener.port}`,
          caPem: gatewayCa,
          tenant: tenantA,
          token: world.tokens[tenantA] as string,
          user: "admin",
        }),
        "utf8",
      ),
    });
    const configs = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    const config = (address: string) => configMapWebhook("probe", { url: `https://${address}/admit` });
    const closed = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const targets = [...hostListeners(), closed].map((port) => `127.0.0.1:${port}`);
    // The etcds, API servers and controller-managers of the super cluster and both tenants, the
    // vn-agents, PostgreSQL, the gateway, and whatever else listens here.
    expect(targets.length).toBeGreaterThan(12);
    expect(targets).toContain(`127.0.0.1:${listener.port}`);
    expect(targets).toContain(`127.0.0.1:${ports.super.apiserver}`);
    expect(targets).toContain(`127.0.0.1:${ports.b.apiserver}`);
    const messages = new Map<string, string[]>();
    try {
      for (const address of targets) {
        const existing = await kubeRequestText(admin, { path: `${configs}/probe` });
        const body = config(address);
        const written = await kubeRequestText(admin, {
          method: existing.status === 200 ? "PUT" : "POST",
          path: existing.status === 200 ? `${configs}/probe` : configs,
          body:
            existing.status === 200
              ? {
                  ...body,
                  metadata: {
                    ...body.metadata,
                    resourceVersion: (JSON.parse(existing.text) as { metadata: { resourceVersion: string } })
                      .metadata.resourceVersion,
                  },
                }
              : body,
        });
        expect(written.status, written.text).toBeLessThan(300);
        const message = await eventually(async () => {
          const created = await kubeRequestText(admin, {
            method: "POST",
            path: "/api/v1/namespaces/default/configmaps",
            body: {
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { generateName: "c-", labels: { webhook: "probe" } },
            },
          });
          const text = (JSON.parse(created.text) as { message?: string }).message ?? "";
          return text.includes(`while dialing ${address},`) ? text : undefined;
        }, 30_000);
        const neutral = message.replaceAll(address, "<address>");
        messages.set(neutral, [...(messages.get(neutral) ?? []), address]);
      }
    } finally {
      await kubeRequestText(admin, { method: "DELETE", path: `${configs}/probe` });
    }
    // One answer for every address: a live etcd, an API server, PostgreSQL, Ring0's gateway, a closed port.
    expect([...messages.keys()], JSON.stringify([...messages.values()])).toHaveLength(1);
    expect([...messages.keys()][0]).toMatch(/proxy error .*while dialing <address>, code 403/);
  }, 300_000);
});

describe("an unauthenticated process on this host", () => {
  const etcdPkiDirs = () => ({
    super: path.join(world.superStateDir, "kwok"),
    a: path.join(world.stateDir, "tenants", tenantA),
    b: path.join(world.stateDir, "tenants", tenantB),
  });

  it("gets nothing from any etcd: no plain text, no TLS without a client certificate, no other cluster's certificate", async () => {
    const dirs = etcdPkiDirs();
    const pki = {
      super: await ensureEtcdPki(dirs.super),
      a: await ensureEtcdPki(dirs.a),
      b: await ensureEtcdPki(dirs.b),
    };
    for (const cluster of ["super", "a", "b"] as const) {
      for (const port of [ports[cluster].etcdClient, ports[cluster].etcdPeer]) {
        expect((await plainHttp(port, "/v3/kv/range")).connected ? "answered" : "refused").toBe("refused");
        expect(await tlsWithoutClientCertificate(port)).toBe(false);
      }
      // Tenant A's own kube-apiserver client certificate does not open tenant B's or the super cluster's etcd.
      const stolen = pki.a["apiserver-etcd-client"];
      const withStolen = await httpsGet(ports[cluster].etcdClient, "/version", stolen);
      if (cluster === "a") {
        // Its own etcd answers it: the probe itself works.
        expect(withStolen).toMatchObject({ connected: true, status: 200 });
      } else {
        expect(withStolen.connected).toBe(false);
      }
    }
  });

  it("is authenticated by no API server except for health and version, whatever a tenant's admin binds", async () => {
    // Tenant B's admin opens their cluster to everyone: RBAC still never sees an anonymous request.
    await serverSideApply(world.admin[tenantB] as ClusterConnection, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "everyone-is-admin" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:unauthenticated" }],
    });
    for (const cluster of ["super", "a", "b"] as const) {
      const port = ports[cluster].apiserver;
      for (const open of ["/livez", "/readyz", "/healthz", "/version"]) {
        expect(await httpsGet(port, open)).toMatchObject({ connected: true, status: 200 });
      }
      for (const closed of ["/api", "/api/v1/secrets", "/apis", "/metrics", "/openapi/v2", "/debug/pprof/"]) {
        const answer = await httpsGet(port, closed);
        expect({ cluster, path: closed, answer }).toMatchObject({
          cluster,
          path: closed,
          answer: { connected: true, status: 401 },
        });
      }
    }
  });

  it("reads no controller-manager's or scheduler's metrics", async () => {
    const components = [
      ports.super.controllerManager,
      ports.super.scheduler as number,
      ports.a.controllerManager,
      ports.b.controllerManager,
    ];
    for (const port of components) {
      expect(await httpsGet(port, "/healthz")).toMatchObject({ connected: true, status: 200 });
      expect(await httpsGet(port, "/metrics")).toMatchObject({ connected: true, status: 403 });
      expect(await httpsGet(port, "/configz")).toMatchObject({ connected: true, status: 403 });
    }
  });

  it("finds no kubelet API without the node PKI's client certificate: kwok serves none, ring0-simkubelet and the vn-agents demand one", async () => {
    // kwok-controller listens nowhere: its pid has no listening socket.
    const kwokPid = Number(
      fs.readFileSync(
        path.join(world.superStateDir, "kwok", "clusters", "ring0", "pids", "kwok-controller.pid"),
        "utf8",
      ),
    );
    const sockets = fs
      .readdirSync(`/proc/${kwokPid}/fd`)
      .map((fd) => {
        try {
          return fs.readlinkSync(`/proc/${kwokPid}/fd/${fd}`);
        } catch {
          return "";
        }
      })
      .filter((link) => link.startsWith("socket:"))
      .map((link) => link.slice("socket:[".length, -1));
    const listeningInodes = fs
      .readFileSync("/proc/net/tcp", "utf8")
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[3] === "0A")
      .map((fields) => fields[9]);
    expect(sockets.filter((inode) => listeningInodes.includes(inode))).toEqual([]);

    const simKubelet = simKubeletPort(world.superStateDir);
    const node = (await ensureNodePki(path.join(world.superStateDir, "kwok")))["vn-agent-kubelet-client"];
    const target = `/exec/${superNamespace(tenantA, "default")}/attacker/attacker?command=id&stdout=1`;
    expect(await tlsWithoutClientCertificate(simKubelet)).toBe(false);
    // A tenant API server's kubelet client certificate (the vn-agents' CA, not the node PKI's) is refused.
    const tenantClient = await (await ensureVnAgentPki(world.stateDir)).issueTenantKubeletClient(tenantA);
    expect((await httpsGet(simKubelet, target, tenantClient)).connected).toBe(false);
    // The node PKI's own client answers /healthz: the probe works.
    expect(await httpsGet(simKubelet, "/healthz", node)).toMatchObject({ connected: true, status: 200 });

    for (const endpoint of world.agents.endpoints().values()) {
      expect(await tlsWithoutClientCertificate(endpoint.port)).toBe(false);
      // The node PKI's client is no tenant API server: the vn-agent does not take it either.
      expect(
        (await httpsGet(endpoint.port, `/containerLogs/default/attacker/attacker`, node)).connected,
      ).toBe(false);
    }
  });

  it("gets nothing from the kube gateway without a Ring0 token", async () => {
    const base = `/k8s/tenants/${tenantA}`;
    expect(await httpsGet(listener.port, `${base}/api/v1/namespaces/default/pods`)).toMatchObject({
      connected: true,
      status: 401,
    });
    const forged = await new Promise<number>((resolve) => {
      const request = http.request({ host: "127.0.0.1", port: listener.port, path: `${base}/api` });
      request.on("error", () => resolve(0));
      request.end();
    });
    expect(forged).toBe(0); // plain HTTP on the TLS port is not spoken at all
  });
});

describe("the super cluster as tenant A's control plane sees it", () => {
  it("keeps tenant A's pods under the walls: the pod below has no super-cluster token", async () => {
    const pod = await kubeRequest<{ spec?: { automountServiceAccountToken?: boolean } }>(world.superCluster, {
      path: `/api/v1/namespaces/${superNamespace(tenantA, "default")}/pods/attacker`,
    });
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
    const mounted = await inPod("ls /var/run/secrets/kubernetes.io/serviceaccount 2>&1; echo done");
    expect(mounted).toMatch(/No such file or directory/);
  });
});
