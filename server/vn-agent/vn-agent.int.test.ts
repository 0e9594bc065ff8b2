/**
 * The vn-agents against the run's local super cluster: a pod synced (as the syncer would) for
 * tenant "vna", served by kwok's kubelet, reached through the agent of its node — and nothing else.
 */
import fs from "node:fs";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import WebSocket from "ws";
import { kubeBinaries } from "@/server/cluster/kwokctl";
import { localSuperCluster } from "@/server/cluster/local";
import { killProcessesMentioning, run } from "@/server/cluster/process";
import { SIMULATED_POD_LABEL, startSimulatedPodLogs } from "@/server/cluster/simulated-pods";
import { createObject, deleteObject } from "@/server/k8s/apply";
import { connectCluster } from "@/server/k8s/cluster";
import type { V1Node } from "@/server/k8s/kinds/node";
import { eventually, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { type CertificateAndKey, issueCa, issueLeaf } from "@/server/pki/certificates";
import { createLocalProvisioner } from "@/server/provisioners/local";
import { kubeconfigFromAccess } from "@/server/provisioners/types";
import { syncAnnotations, syncLabels, vnAgentEndpoints } from "@/server/syncer/contracts";
import { superNamespace } from "@/server/syncer/naming";
import { startVnAgent } from "./agent";
import { TENANT_APISERVER_ORGANIZATION } from "./identity";
import { ensureVnAgentPki, type VnAgentPki } from "./pki";
import { vnAgentPortsFile } from "./ports";
import { startVnAgents, type VnAgents } from "./vn-agents";

/** The run's super cluster serves its simulated nodes' kubelet API only to the node PKI's clients. */
const superKubeletTls = () =>
  localSuperCluster({ stateDir: inject("superStateDir"), logger: createLogger({}, "warn") }).kubeletClient();

const logger = createLogger({}, "warn");
const conn = testSuperCluster();
const superNs = superNamespace("vna", "default");
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-vn-agent-"));

let binder: ReturnType<typeof startSimulatedPodLogs> | undefined;
let agents: VnAgents | undefined;
let pki: VnAgentPki;
let vna: CertificateAndKey;
let other: CertificateAndKey;
let podNode = "";
let provisioner: ReturnType<typeof createLocalProvisioner> | undefined;

interface Answer {
  status: number;
  body: string;
}

function request(
  port: number,
  target: string,
  client: CertificateAndKey | undefined,
  options: { ca?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = https.request(
      {
        host: "127.0.0.1",
        port,
        servername: "localhost",
        path: target,
        ca: options.ca ?? pki.servingCa.cert,
        ...(client ? { cert: client.cert, key: client.key } : {}),
        agent: false,
        timeout: 15_000,
      },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
        response.on("error", reject);
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error("timed out")));
    outgoing.on("error", reject);
    outgoing.end();
  });
}

function portOf(node: string): number {
  const endpoint = vnAgentEndpoints().get(node);
  if (!endpoint) throw new Error(`no vn-agent for ${node}`);
  return endpoint.port;
}

/** Exec over WebSocket (v5.channel.k8s.io): stdout and the closing status. */
function execOverWebSocket(port: number, target: string, client: CertificateAndKey) {
  return new Promise<{ protocol: string; stdout: string; status: string }>((resolve, reject) => {
    // ws hands TLS options through to tls.connect (servername: the agent's certificate names localhost).
    const tlsOptions = {
      ca: pki.servingCa.cert,
      cert: client.cert,
      key: client.key,
      servername: "localhost",
    };
    const socket = new WebSocket(
      `wss://127.0.0.1:${port}${target}`,
      ["v5.channel.k8s.io", "v4.channel.k8s.io"],
      tlsOptions as WebSocket.ClientOptions,
    );
    let stdout = "";
    let status = "";
    socket.on("message", (data: Buffer) => {
      const channel = data[0];
      const text = data.subarray(1).toString("utf8");
      if (channel === 1) stdout += text;
      if (channel === 3) status += text;
    });
    socket.on("close", () => resolve({ protocol: socket.protocol, stdout, status }));
    socket.on("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      response.on("end", () => reject(new Error(`exec answered ${response.statusCode}: ${body}`)));
    });
    socket.on("error", reject);
    setTimeout(() => {
      socket.terminate();
      reject(new Error("exec timed out"));
    }, 20_000).unref();
  });
}

beforeAll(async () => {
  binder = startSimulatedPodLogs(conn, { stateDir: inject("superStateDir"), logger });
  await createObject(conn, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: superNs,
      labels: { [syncLabels.tenant]: "vna", [syncLabels.managed]: "true" },
      annotations: { [syncAnnotations.namespace]: "default" },
    },
  });
  await createObject(conn, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "web",
      namespace: superNs,
      labels: { [syncLabels.tenant]: "vna", [syncLabels.managed]: "true", [SIMULATED_POD_LABEL]: "true" },
      annotations: {
        [syncAnnotations.namespace]: "default",
        [syncAnnotations.name]: "web",
        [syncAnnotations.uid]: "00000000-0000-0000-0000-000000000001",
      },
    },
    // No nodeName: the super cluster's scheduler places it on a kwok node.
    spec: {
      containers: [{ name: "app", image: "registry.invalid/app:1" }],
      tolerations: [{ key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule" }],
    },
  });
  const running = await eventually(async () => {
    const pod = await kubeRequest<{ spec?: { nodeName?: string }; status?: { phase?: string } }>(conn, {
      path: `/api/v1/namespaces/${superNs}/pods/web`,
    });
    return pod.status?.phase === "Running" && pod.spec?.nodeName ? pod : undefined;
  }, 40_000);
  podNode = running.spec?.nodeName ?? "";

  pki = await ensureVnAgentPki(stateDir);
  vna = await pki.issueTenantKubeletClient("vna");
  other = await pki.issueTenantKubeletClient("other");
  agents = await startVnAgents({ superCluster: conn, stateDir, logger, kubeletTls: await superKubeletTls() });
  await agents.ready();
}, 90_000);

afterAll(async () => {
  await provisioner?.destroy("vna").catch(() => undefined);
  await killProcessesMentioning(`${stateDir}/`);
  await agents?.stop();
  binder?.stop();
  await deleteObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: superNs } }).catch(
    () => undefined,
  );
  fs.rmSync(stateDir, { recursive: true, force: true });
});

describe("vn-agents", () => {
  it("listen on 127.0.0.1, one per super node, published as vnAgentEndpoints()", () => {
    const endpoints = vnAgentEndpoints();
    expect(endpoints.get(podNode)).toMatchObject({ node: podNode, host: "localhost" });
    expect(endpoints.size).toBeGreaterThanOrEqual(3);
    expect(new Set([...endpoints.values()].map((endpoint) => endpoint.port)).size).toBe(endpoints.size);
  });

  it("serve the tenant's pod logs from the node's kubelet", async () => {
    const answer = await eventually(async () => {
      const result = await request(portOf(podNode), "/containerLogs/default/web/app?tailLines=10", vna);
      return result.status === 200 && result.body.includes("simulated pod") ? result : undefined;
    }, 30_000);
    // Bound by the binder once scheduled, so the first line names the node it runs on.
    expect(answer.body).toContain(`ring0: simulated pod ${superNs}/web started on ${podNode}`);
  });

  it("run exec over WebSocket (offering v5.channel.k8s.io)", { timeout: 60_000 }, async () => {
    const result = await eventually(async () => {
      const run = await execOverWebSocket(
        portOf(podNode),
        "/exec/default/web/app?command=echo&command=hi&output=1&error=1",
        vna,
      );
      return run.stdout.includes("hi") ? run : undefined;
    }, 30_000);
    // The client offers v5 first; kwok v0.8's kubelet streaming server speaks up to v4 and picks it.
    // The agent passes the kubelet's choice through untouched.
    expect(["v5.channel.k8s.io", "v4.channel.k8s.io"]).toContain(result.protocol);
    expect(result.stdout.trim()).toBe("hi");
    expect(result.status).toContain("Success");
  });

  it("refuse another tenant's certificate with 403, the same as for a pod that does not exist", async () => {
    const foreign = await request(portOf(podNode), "/containerLogs/default/web/app", other);
    const missing = await request(portOf(podNode), "/containerLogs/default/nope/app", other);
    expect(foreign.status).toBe(403);
    expect(missing.status).toBe(403);
    expect(foreign.body.replace("web", "nope")).toBe(missing.body);
    const exec = await request(portOf(podNode), "/exec/default/web/app?command=id&output=1", other);
    expect(exec.status).toBe(403);
  });

  it("refuse a pod bound to another node", async () => {
    const elsewhere = [...vnAgentEndpoints().keys()].find((node) => node !== podNode) ?? "";
    const answer = await request(portOf(elsewhere), "/containerLogs/default/web/app", vna);
    expect(answer.status).toBe(403);
  });

  it("answer 404 for paths that are not the tenant-facing kubelet API", async () => {
    for (const target of ["/pods", "/metrics", "/runningpods/", "/configz", "/containerLogs/default/web"]) {
      const answer = await request(portOf(podNode), target, vna);
      expect(answer.status, target).toBe(404);
    }
  });

  it("refuse a TLS handshake without a client certificate", async () => {
    await expect(request(portOf(podNode), "/containerLogs/default/web/app", undefined)).rejects.toThrow();
  });

  it("refuse a client certificate from another CA, even with a tenant apiserver's subject", async () => {
    const now = new Date();
    const foreignCa = await issueCa({ name: "CN=not-the-vn-agent-ca", days: 1, now });
    const forged = await issueLeaf({
      issuer: foreignCa,
      subject: `CN=vna, O=${TENANT_APISERVER_ORGANIZATION}`,
      usages: ["clientAuth"],
      days: 1,
      now,
    });
    await expect(request(portOf(podNode), "/containerLogs/default/web/app", forged)).rejects.toThrow();
  });
});

describe("a tenant's share of an agent", () => {
  it("holds each tenant to its open streams; one closed frees its place", { timeout: 60_000 }, async () => {
    const kubeletTls = await superKubeletTls();
    const nodes = await kubeRequest<{ items: V1Node[] }>(conn, { path: "/api/v1/nodes" });
    const agent = await startVnAgent({
      node: podNode,
      currentNode: () => nodes.items.find((node) => node.metadata?.name === podNode),
      superCluster: conn,
      superNamespace,
      tls: { cert: pki.serving.cert, key: pki.serving.key, clientCa: pki.clientCa.cert },
      kubeletTls,
      logger,
      maxStreamsPerTenant: 1,
    });
    // A followed log holds its place while it streams.
    const follow = await new Promise<{ status: number; close(): void }>((resolve, reject) => {
      const outgoing = https.request(
        {
          host: "127.0.0.1",
          port: agent.port,
          servername: "localhost",
          path: "/containerLogs/default/web/app?follow=true",
          ca: pki.servingCa.cert,
          cert: vna.cert,
          key: vna.key,
          agent: false,
        },
        (response) => resolve({ status: response.statusCode ?? 0, close: () => outgoing.destroy() }),
      );
      outgoing.on("error", reject);
      outgoing.end();
    });
    try {
      expect(follow.status).toBe(200);
      const refused = await request(agent.port, "/containerLogs/default/web/app?tailLines=1", vna);
      expect(refused.status).toBe(429);
      expect(refused.body).toContain("close some and try again");
      // Another tenant is judged on its own (here: not its pod), never refused for vna's streams.
      const another = await request(agent.port, "/containerLogs/default/web/app", other);
      expect(another.status).toBe(403);
      follow.close();
      const again = await eventually(async () => {
        const answer = await request(agent.port, "/containerLogs/default/web/app?tailLines=1", vna);
        return answer.status === 200 ? answer : undefined;
      }, 10_000);
      expect(again.status).toBe(200);
    } finally {
      follow.close();
      await agent.close();
    }
  });
});

describe("through a real tenant control plane (local provisioner)", () => {
  it("kubectl logs and kubectl exec reach kwok via the tenant apiserver and the vn-agent", {
    timeout: 180_000,
  }, async () => {
    // The provisioner shares the agents' state dir, so its kubelet client certificates come from their PKI.
    const binDir = await kubeBinaries(logger, { build: false });
    const printed = await run(path.join(binDir, "kube-apiserver"), ["--version"], { timeoutMs: 30_000 });
    const version = /v(\d+\.\d+\.\d+)/.exec(printed.stdout)?.[1] ?? "";
    provisioner = createLocalProvisioner({ stateDir, logger, versions: { [version]: binDir } });
    await provisioner.ensure({ tenant: "vna", version, suspended: false });
    await eventually(
      async () => ((await provisioner?.observe("vna"))?.phase === "Running" ? true : undefined),
      60_000,
    );
    const access = await provisioner.access("vna");
    if (!access) throw new Error("no access to vna");
    const kubeconfig = path.join(stateDir, "vna.kubeconfig");
    fs.writeFileSync(kubeconfig, kubeconfigFromAccess(access, "vna"), { mode: 0o600 });
    const kubectl = (args: string[]) =>
      run(path.join(binDir, "kubectl"), ["--kubeconfig", kubeconfig, ...args], { timeoutMs: 30_000 });

    // What the syncer does: a vNode whose kubelet endpoint is the agent, and the pod bound to it.
    const tenant = connectCluster("vna", { inline: kubeconfigFromAccess(access, "vna") });
    await eventually(
      async () =>
        kubeRequest(tenant, { path: "/api/v1/namespaces/default/serviceaccounts/default" }).then(() => true),
      60_000,
    );
    await createObject(tenant, { apiVersion: "v1", kind: "Node", metadata: { name: podNode } });
    await kubeRequest(tenant, {
      method: "PATCH",
      path: `/api/v1/nodes/${podNode}/status`,
      contentType: "application/merge-patch+json",
      body: {
        status: {
          addresses: [{ type: "Hostname", address: "localhost" }],
          daemonEndpoints: { kubeletEndpoint: { Port: portOf(podNode) } },
          conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "vNode" }],
        },
      },
    });
    await createObject(tenant, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "default" },
      spec: { nodeName: podNode, containers: [{ name: "app", image: "registry.invalid/app:1" }] },
    });

    const logs = await kubectl(["logs", "-n", "default", "web", "-c", "app"]);
    expect(logs.stdout).toContain(`ring0: simulated pod ${superNs}/web started`);

    const exec = await kubectl(["exec", "-n", "default", "web", "-c", "app", "--", "echo", "hi"]);
    expect(exec.stdout.trim()).toBe("hi");
    const overSpdy = await run(
      path.join(binDir, "kubectl"),
      ["--kubeconfig", kubeconfig, "exec", "-n", "default", "web", "-c", "app", "--", "echo", "spdy"],
      {
        timeoutMs: 30_000,
        env: { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: "false", PATH: process.env.PATH ?? "" },
      },
    );
    expect(overSpdy.stdout.trim()).toBe("spdy");
  });
});

describe("vn-agents across a Ring0 restart", () => {
  it("listen on the same ports again, a new one where the old is taken, and forget nodes that are gone", {
    timeout: 60_000,
  }, async () => {
    const before = agents?.endpoints() ?? new Map();
    const [taken, ...kept] = [...before.keys()].sort();
    if (!taken) throw new Error("no vn-agents are running");
    // A node that left while Ring0 was away has an entry from before.
    const file = vnAgentPortsFile(stateDir);
    const recorded = JSON.parse(fs.readFileSync(file, "utf8")) as { ports: Record<string, number> };
    fs.writeFileSync(file, JSON.stringify({ ports: { ...recorded.ports, "gone-node": 1 } }));

    await agents?.stop();
    // Something else took one node's port meanwhile.
    const squatter = net.createServer();
    await new Promise<void>((resolve) =>
      squatter.listen({ host: "127.0.0.1", port: before.get(taken)?.port }, resolve),
    );
    try {
      agents = await startVnAgents({
        superCluster: conn,
        stateDir,
        logger,
        kubeletTls: await superKubeletTls(),
      });
      await agents.ready();
      const after = agents.endpoints();
      for (const node of kept) expect(after.get(node)?.port).toBe(before.get(node)?.port);
      const moved = after.get(taken)?.port;
      expect(moved).toBeDefined();
      expect(moved).not.toBe(before.get(taken)?.port);
      // The new port is recorded, the gone node dropped.
      const saved = JSON.parse(fs.readFileSync(file, "utf8")) as { ports: Record<string, number> };
      expect(saved.ports[taken]).toBe(moved);
      expect(saved.ports["gone-node"]).toBeUndefined();
      expect(Object.keys(saved.ports).sort()).toEqual([...after.keys()].sort());
      // And the moved agent serves there.
      const answer = await request(moved ?? 0, "/healthz", vna);
      expect(answer.status).toBe(404);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});
