/**
 * Issue 5's "done when", end to end on real parts: `kubectl run web --image=nginx` with acme's
 * kubeconfig through the kube gateway (HTTPS, a real Ring0 token) gives a pod Running in acme's
 * control plane (local provisioner), bound to a vNode, present in the super cluster under acme's
 * prefix; `kubectl logs` / `kubectl exec` answer through gateway → tenant apiserver → vn-agent →
 * kwok; globex sees none of it. Everything is the runtime's own wiring: the kwok debug binder, the
 * vn-agents sharing the provisioner's state dir (so the tenant apiservers' kubelet client
 * certificates come from their PKI), the syncer with the local world's pod labels, tenant defaults.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { localSuperCluster } from "@/server/cluster/local";
import { CommandError, processesMentioning, type RunResult, run } from "@/server/cluster/process";
import { SIMULATED_POD_LABEL, simulatedPodLogFile } from "@/server/cluster/simulated-pods";
import type { SessionUser } from "@/server/core/roles";
import { readObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { eventually } from "@/server/k8s/test-cluster";
import { createKubeconfigService } from "@/server/kubeconfigs/service";
import { createLogger } from "@/server/logger";
import { createTokenService } from "@/server/tokens/service";
import { type DataPlaneWorld, startDataPlaneWorld } from "@/test/integration/data-plane-world";
import { createKubeGateway, type KubeGateway } from "../gateway/gateway";
import { type GatewayListener, startGatewayListener } from "../gateway/listener";
import { ensureGatewayTls } from "../gateway/tls";
import { syncAnnotations, syncLabels, vnAgentEndpoints } from "./contracts";
import { superNamespace, tenantPrefix } from "./naming";
import type { Syncer } from "./syncer";
import { type Obj, readOrUndefined, ref } from "./test-world";
import { vNodeLabel } from "./vnode-content";

const logger = createLogger({ service: "done-when-it" }, "error");
const superStateDir = inject("superStateDir");
const suffix = Math.random().toString(36).slice(2, 7);
const acme = `acme-${suffix}`;
const globex = `globex-${suffix}`;
const ours = new Set([acme, globex]);

let world: DataPlaneWorld;
let superCluster: ClusterConnection;
let stateDir = "";
let workDir = "";
let kubectlBinary = "";
let syncer: Syncer | undefined;
let gateway: KubeGateway | undefined;
let listener: GatewayListener | undefined;
const kubeconfigs: Record<string, string> = {};
const tokens: Record<string, string> = {};

/** The real kubectl with a kubeconfig file; HOME is a temp dir. A non-zero exit is returned, not thrown. */
async function kubectlWith(kubeconfig: string, args: string[]): Promise<RunResult> {
  try {
    return await run(
      kubectlBinary,
      ["--kubeconfig", kubeconfig, "--cache-dir", path.join(workDir, "cache"), ...args],
      { timeoutMs: 60_000, env: { PATH: process.env.PATH ?? "", HOME: workDir } },
    );
  } catch (error) {
    if (error instanceof CommandError) return error.result;
    throw error;
  }
}

const kubectl = (tenant: string, args: string[]) => kubectlWith(kubeconfigs[tenant] as string, args);

beforeAll(async () => {
  // The runtime's data plane: kwok's debug binder, vn-agents sharing the provisioner's state dir, two
  // tenants with their control planes and defaults, the syncer with the local world's pod labels.
  world = await startDataPlaneWorld({ tenants: [...ours], logger, name: "done-when" });
  ({ superCluster, stateDir, syncer } = world);
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-done-when-home-"));
  kubectlBinary = await localSuperCluster({ stateDir: superStateDir, logger }).kubectlPath();

  // The kube gateway on its HTTPS listener, with Ring0's own gateway CA, as the runtime starts it.
  const tokenService = createTokenService({ db: world.db });
  gateway = createKubeGateway({
    authenticate: (plaintext) => tokenService.verifyToken(plaintext),
    directory: () => world.directory,
    limits: { ratePerSecond: 1000, burst: 1000, maxLongRunning: 20 },
    audit: async () => {},
    logger,
  });
  const tls = await ensureGatewayTls({ stateDir: workDir });
  listener = await startGatewayListener({ gateway, tls, port: 0, logger });
  const endpoint = { gatewayUrl: `https://localhost:${listener.port}`, caPem: tls.caPem as string };
  const service = createKubeconfigService({ db: world.db, gateway: endpoint });
  for (const tenant of ours) {
    const user = world.users[tenant] as SessionUser;
    const issued = await service.issueKubeconfig({ user, tenant, expiresInDays: 1 });
    const file = path.join(workDir, `${tenant}.kubeconfig`);
    fs.writeFileSync(file, issued.kubeconfig, { mode: 0o600 });
    kubeconfigs[tenant] = file;
    tokens[tenant] = /token: "([^"]+)"/.exec(issued.kubeconfig)?.[1] ?? "";
  }
}, 300_000);

afterAll(async () => {
  await listener?.close();
  gateway?.close();
  await world?.stop();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
}, 180_000);

describe("issue 5, done when", { timeout: 180_000 }, () => {
  let nodeName = "";
  const superNs = () => superNamespace(acme, "default");
  const marker = `ring0 done-when: hello from ${acme}`;

  it("kubectl run through the gateway gives a pod Running in acme, on a vNode, synced below under acme's prefix", async () => {
    const created = await kubectl(acme, ["run", "web", "--image=nginx"]);
    expect(created.stderr).toBe("");
    expect(created.stdout.trim()).toBe("pod/web created");

    const pod = await eventually(async () => {
      const got = await kubectl(acme, ["get", "pod", "web", "-o", "json"]);
      if (got.code !== 0) return undefined;
      const parsed = JSON.parse(got.stdout) as Obj;
      return parsed.status?.phase === "Running" && parsed.spec?.nodeName ? parsed : undefined;
    }, 120_000);
    nodeName = pod.spec?.nodeName ?? "";

    // The node it is bound to is a vNode in acme's control plane, its kubelet endpoint the vn-agent's.
    const node = await kubectl(acme, ["get", "node", nodeName, "-o", "json"]);
    expect(node.stderr).toBe("");
    const vNode = JSON.parse(node.stdout) as Obj & {
      status: { daemonEndpoints: { kubeletEndpoint: { Port: number } } };
    };
    expect(vNode.metadata.labels?.[vNodeLabel]).toBe("true");
    expect(vNode.status.daemonEndpoints.kubeletEndpoint.Port).toBe(vnAgentEndpoints().get(nodeName)?.port);

    // Below: in acme's super namespace, labelled for acme (and for kwok's logs/exec), on the same node.
    const below = await readObject<Obj>(superCluster, ref("Pod", "web", superNs()));
    expect(superNs()).toBe(`${tenantPrefix(acme)}-default`);
    const namespace = await readObject(superCluster, ref("Namespace", superNs()));
    expect(namespace.metadata.labels?.[syncLabels.tenant]).toBe(acme);
    expect(below.metadata.labels).toMatchObject({
      run: "web",
      [syncLabels.tenant]: acme,
      [syncLabels.managed]: "true",
      [SIMULATED_POD_LABEL]: "true",
    });
    expect(below.metadata.annotations).toMatchObject({
      [syncAnnotations.namespace]: "default",
      [syncAnnotations.name]: "web",
      [syncAnnotations.uid]: pod.metadata.uid,
    });
    expect(below.spec?.nodeName).toBe(nodeName);
    expect(below.status?.phase).toBe("Running");
  });

  it("kubectl logs and kubectl exec answer through the gateway, the tenant apiserver and the vn-agent", async () => {
    // kwok's Logs object for the pod follows this file (the binder writes its first lines).
    const logsFile = simulatedPodLogFile(superStateDir, superNs(), "web");
    await eventually(async () => (fs.existsSync(logsFile) ? true : undefined), 60_000);
    fs.appendFileSync(logsFile, `${new Date().toISOString()} stdout F ${marker}\n`);

    const logs = await eventually(async () => {
      const result = await kubectl(acme, ["logs", "web"]);
      return result.code === 0 && result.stdout.includes(marker) ? result : undefined;
    }, 60_000);
    expect(logs.stdout).toContain(`ring0: simulated pod ${superNs()}/web started on ${nodeName}`);
    expect(logs.stdout.split("\n")).toContain(marker);

    // Every time, cleanly: the gateway flushes the stream's last frames before closing (was 1006).
    for (let attempt = 0; attempt < 3; attempt++) {
      const exec = await kubectl(acme, ["exec", "web", "--", "echo", "hi"]);
      expect(exec.stderr).toBe("");
      expect(exec.code).toBe(0);
      expect(exec.stdout).toBe("hi\n");
    }
  });

  it("globex sees none of it", async () => {
    const pods = await kubectl(globex, ["get", "pods", "-A", "-o", "json"]);
    expect(pods.code).toBe(0);
    expect(
      (JSON.parse(pods.stdout) as { items: Obj[] }).items.map((item) => item.metadata.name),
    ).not.toContain("web");
    const nodes = await kubectl(globex, ["get", "nodes", "-o", "json"]);
    expect(nodes.code).toBe(0);
    // globex runs no pods, so it has no vNodes at all.
    expect((JSON.parse(nodes.stdout) as { items: Obj[] }).items).toEqual([]);
    const node = await kubectl(globex, ["get", "node", nodeName]);
    expect(node.stderr).toContain("NotFound");

    const logs = await kubectl(globex, ["logs", "web"]);
    expect(logs.code).not.toBe(0);
    expect(logs.stderr).toContain("NotFound");
    const exec = await kubectl(globex, ["exec", "web", "--", "echo", "hi"]);
    expect(exec.code).not.toBe(0);
    expect(exec.stdout).toBe("");

    // globex's token on acme's path: the gateway answers as if acme did not exist.
    const forged = path.join(workDir, "forged.kubeconfig");
    fs.writeFileSync(
      forged,
      fs
        .readFileSync(kubeconfigs[acme] as string, "utf8")
        .replace(tokens[acme] as string, tokens[globex] as string),
      { mode: 0o600 },
    );
    expect(fs.readFileSync(forged, "utf8")).toContain(`/k8s/tenants/${acme}`);
    for (const args of [
      ["get", "pod", "web"],
      ["logs", "web"],
    ]) {
      const answer = await kubectlWith(forged, args);
      expect(answer.code, args.join(" ")).not.toBe(0);
      expect(answer.stderr, args.join(" ")).toContain("NotFound");
      expect(answer.stderr).not.toContain("simulated pod");
    }
  });

  it("deleting the pod in acme removes it below and its vNode above; the control planes go without a trace", async () => {
    const deleted = await kubectl(acme, ["delete", "pod", "web", "--wait=true"]);
    expect(deleted.stdout).toContain('pod "web" deleted');
    await eventually(
      async () => ((await readOrUndefined(superCluster, ref("Pod", "web", superNs()))) ? undefined : true),
      60_000,
    );
    await eventually(async () => {
      const nodes = await kubectl(acme, ["get", "nodes", "-o", "name"]);
      return nodes.code === 0 && nodes.stdout.trim() === "" ? true : undefined;
    }, 60_000);

    await syncer?.stop();
    syncer = undefined;
    for (const tenant of ours) await world.provisioner.destroy(tenant);
    expect(processesMentioning(`${stateDir}/`)).toEqual([]);
  });
});
