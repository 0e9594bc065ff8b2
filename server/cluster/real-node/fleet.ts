/**
 * The real nodes of a local super cluster, together: made to number exactly `count` (ring0-real-0 …),
 * with the host's wall (./host-firewall.ts), kube-proxy (one per host, for Services), the RBAC the
 * vn-agents need on kubelets, the sandbox's RuntimeClass and the local volumes' StorageClass, and
 * the host lock; and all removed again.
 */
import fs from "node:fs";
import path from "node:path";
import { deleteObject, type KubeObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import { SANDBOX_RUNTIME_CLASS } from "@/server/syncer/isolation-schema";
import { ensureDaemon, readDaemonRecord, runningDaemon, stopDaemon } from "../daemon";
import { NODE_PROXY_GROUP } from "../hardening";
import { waitLocalNodesReady } from "../node-pool";
import { freeLoopbackPorts } from "../ports";
import { run } from "../process";
import { kubeconfigYaml, kubeProxyConfig, SANDBOX_HANDLER, SANDBOX_NODE_LABEL } from "./configs";
import { realNodePrerequisites, releaseHostLock, takeHostLock } from "./host";
import { ensureHostFirewall, removeHostFirewall } from "./host-firewall";
import { ensureImageArchives } from "./images";
import { ensureNetworkPolicyEnforcer, removeNetworkPolicyEnforcer } from "./network-policy";
import {
  daemonEnv,
  ensureRealNode,
  httpOk,
  type RealNodeContext,
  removeRealNode,
  writeIfChanged,
} from "./node";
import { ensureKubeProxyPki } from "./pki";
import {
  kubeProxyPlan,
  MAX_REAL_NODES,
  networkPolicyPlan,
  REAL_NODE_LABEL,
  realNodeIndex,
  realNodePlan,
  realNodesDir,
  registryPlan,
} from "./plan";
import { ensureRegistry, pushImageArchive, stopRegistry } from "./registry";
import { localStorageClass } from "./volumes";

/** Real nodes whose directories exist under the state dir, by index. */
export function realNodesOnDisk(stateDir: string): number[] {
  let entries: string[];
  try {
    entries = fs.readdirSync(realNodesDir(stateDir));
  } catch {
    return [];
  }
  return entries
    .map(realNodeIndex)
    .filter((index): index is number => index !== undefined)
    .sort((a, b) => a - b);
}

/** Lets Ring0's vn-agents (their certificate's group) use every kubelet's API through the kubelet's webhook authorization. */
export const NODE_PROXY_RBAC: KubeObject[] = [
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "ring0:kubelet-api" },
    rules: [
      {
        apiGroups: [""],
        resources: [
          "nodes/proxy",
          "nodes/log",
          "nodes/stats",
          "nodes/metrics",
          "nodes/healthz",
          "nodes/pods",
        ],
        verbs: ["get", "create"],
      },
    ],
  } as KubeObject,
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "ring0:kubelet-api" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ring0:kubelet-api" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: NODE_PROXY_GROUP }],
  } as KubeObject,
];

const kubeProxySpec = (stateDir: string, binDir: string, healthzPort: number) => {
  const plan = kubeProxyPlan(stateDir);
  return {
    name: "kube-proxy serving",
    binary: path.join(binDir, "kube-proxy"),
    args: [`--config=${plan.config}`, "--v=1"],
    env: daemonEnv(binDir, plan.dir),
    cwd: plan.dir,
    recordFile: plan.record,
    inputs: [plan.config, plan.kubeconfig, path.join(plan.pki, "client.crt")],
    logFile: path.join(plan.logs, "kube-proxy.log"),
    marker: `${plan.dir}/`,
    ready: () => httpOk(`http://127.0.0.1:${healthzPort}/healthz`),
    readyTimeoutMs: 90_000,
  };
};

async function ensureKubeProxy(stateDir: string, context: RealNodeContext, nodeName: string): Promise<void> {
  const plan = kubeProxyPlan(stateDir);
  fs.mkdirSync(plan.logs, { recursive: true, mode: 0o700 });
  const client = await ensureKubeProxyPki(plan.pki, context.clusterCa);
  const kubeconfig = kubeconfigYaml({
    server: context.server,
    caFile: context.clusterCa.certFile,
    certFile: client.certFile,
    keyFile: client.keyFile,
    user: "system:kube-proxy",
  });
  writeIfChanged(plan.kubeconfig, kubeconfig, 0o600);
  let ports: number[] | undefined;
  try {
    const text = fs.readFileSync(plan.config, "utf8");
    const healthz = Number(/^healthzBindAddress: 127\.0\.0\.1:(\d+)$/m.exec(text)?.[1]);
    const metrics = Number(/^metricsBindAddress: 127\.0\.0\.1:(\d+)$/m.exec(text)?.[1]);
    if (healthz > 0 && metrics > 0) ports = [healthz, metrics];
  } catch {
    ports = undefined;
  }
  const [healthzPort, metricsPort] = ports ?? (await freeLoopbackPorts(2));
  writeIfChanged(
    plan.config,
    kubeProxyConfig({
      kubeconfig: plan.kubeconfig,
      nodeName,
      healthzPort: healthzPort as number,
      metricsPort: metricsPort as number,
    }),
  );
  await ensureDaemon(kubeProxySpec(stateDir, context.binDir, healthzPort as number));
}

/** Removes kube-proxy's rules from the host's iptables and stops it. */
async function removeKubeProxy(stateDir: string, binDir: string): Promise<void> {
  const plan = kubeProxyPlan(stateDir);
  const binary = path.join(binDir, "kube-proxy");
  await stopDaemon({ binary, recordFile: plan.record, marker: `${plan.dir}/` });
  if (fs.existsSync(plan.config) && fs.existsSync(binary)) {
    await run(binary, [`--config=${plan.config}`, "--cleanup"], {
      env: daemonEnv(binDir, plan.dir),
      timeoutMs: 60_000,
    }).catch(() => undefined);
  }
}

async function ensureNodeProxyRbac(conn: ClusterConnection): Promise<void> {
  for (const object of NODE_PROXY_RBAC) await serverSideApply(conn, object, { force: true });
}

/**
 * Exactly `count` real nodes running and Ready (extra ones removed with their Node objects). With
 * none wanted, also kube-proxy, the host's wall and the host lock go.
 */
export async function ensureRealNodes(
  stateDir: string,
  count: number,
  context: RealNodeContext & { connection: ClusterConnection },
): Promise<void> {
  if (!Number.isInteger(count) || count < 0 || count > MAX_REAL_NODES) {
    throw new Error(`--real-nodes needs a whole number from 0 to ${MAX_REAL_NODES}, got ${count}`);
  }
  const extra = realNodesOnDisk(stateDir).filter((index) => index >= count);
  for (const index of extra) {
    const plan = realNodePlan(stateDir, index);
    await removeRealNode(context.binDir, plan, context.logger);
    await deleteObject(context.connection, {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: plan.name },
    }).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }
  if (count === 0) {
    await removeRealNodes(stateDir, context.binDir, context.logger);
    return;
  }
  const problems = realNodePrerequisites();
  if (problems.length > 0) throw new Error(`real nodes cannot run here:\n  - ${problems.join("\n  - ")}`);
  takeHostLock(path.resolve(stateDir));
  await ensureHostFirewall();
  const archives = await ensureImageArchives(stateDir, context.binDir);
  await ensureOwnImagesInRegistry(stateDir, context, archives);
  for (let index = 0; index < count; index++) {
    await ensureRealNode(context, realNodePlan(stateDir, index), archives);
  }
  await ensureNodeProxyRbac(context.connection);
  await ensureKubeProxy(stateDir, context, realNodePlan(stateDir, 0).name);
  if (context.netpolBinDir) {
    if (count > 1)
      context.logger.warn(
        `NetworkPolicies are enforced for the pods of ${realNodePlan(stateDir, 0).name} only (one kube-router per host); the wall between tenants covers every real node`,
      );
    await ensureNetworkPolicyEnforcer(
      stateDir,
      { ...context, netpolBinDir: context.netpolBinDir },
      realNodePlan(stateDir, 0).name,
    );
  } else {
    await removeNetworkPolicyEnforcer(stateDir);
  }
  await waitLocalNodesReady(context.connection, count, 120_000, `${REAL_NODE_LABEL}=true`);
  await ensureSandboxRuntimeClass(context.connection, count, stateDir, Boolean(context.sandboxBinDir));
  // Local volumes on the real nodes (./volumes.ts provisions them while Ring0 leads).
  await serverSideApply(context.connection, localStorageClass(), { force: true });
}

/**
 * The super cluster's RuntimeClass of Ring0's sandbox (gVisor, handler runsc), scheduling its pods
 * onto the real nodes that run it (labelled here too: a kubelet sets its --node-labels only when it
 * registers). Without gVisor's binaries the class is removed, so no pod waits for a node that
 * cannot run it.
 */
async function ensureSandboxRuntimeClass(
  conn: ClusterConnection,
  count: number,
  stateDir: string,
  sandbox: boolean,
): Promise<void> {
  for (let index = 0; index < count; index++) {
    await kubeRequest(conn, {
      method: "PATCH",
      path: `/api/v1/nodes/${realNodePlan(stateDir, index).name}`,
      contentType: "application/merge-patch+json",
      body: { metadata: { labels: { [SANDBOX_NODE_LABEL]: sandbox ? SANDBOX_HANDLER : null } } },
      timeoutMs: 15_000,
    });
  }
  const runtimeClass = {
    apiVersion: "node.k8s.io/v1",
    kind: "RuntimeClass",
    metadata: { name: SANDBOX_RUNTIME_CLASS, labels: { "app.kubernetes.io/managed-by": "ring0" } },
    handler: SANDBOX_HANDLER,
    scheduling: { nodeSelector: { [SANDBOX_NODE_LABEL]: SANDBOX_HANDLER } },
  } as KubeObject;
  if (sandbox) await serverSideApply(conn, runtimeClass, { force: true });
  else
    await deleteObject(conn, runtimeClass).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
}

/**
 * The registry running, with Ring0's own images in it too, as built here (nodes have them imported
 * already; the registry lets a pod with imagePullPolicy: Always, or a node that lost them, pull them
 * again). Pushed on every up, replacing whatever else might stand under their names.
 */
async function ensureOwnImagesInRegistry(
  stateDir: string,
  context: RealNodeContext,
  archives: string[],
): Promise<void> {
  await ensureRegistry(stateDir, context.binDir);
  for (const archive of archives)
    await pushImageArchive(stateDir, context.binDir, archive, { replace: true, ownImages: true });
}

/** Every real node of this state dir gone, with kube-proxy's rules, the host's wall and the lock. Returns what stayed. */
export async function removeRealNodes(stateDir: string, binDir: string, logger: Logger): Promise<string[]> {
  const left: string[] = [];
  for (const index of realNodesOnDisk(stateDir)) {
    left.push(...(await removeRealNode(binDir, realNodePlan(stateDir, index), logger)));
  }
  if (fs.existsSync(realNodesDir(stateDir))) {
    await removeKubeProxy(stateDir, binDir);
    await removeNetworkPolicyEnforcer(stateDir);
    await stopRegistry(stateDir, binDir);
    await removeHostFirewall().catch((error: unknown) => left.push(`firewall: ${String(error)}`));
    releaseHostLock(path.resolve(stateDir));
    if (left.length === 0) fs.rmSync(realNodesDir(stateDir), { recursive: true, force: true });
  }
  return left;
}

/**
 * The real nodes' daemons that should run (their record is there) and do not (their process
 * exited): containerd and kubelet of each node, kube-proxy, kube-router and the image registry.
 * A cheap check (files and /proc) for the super cluster's watchdog; `ensureRealNodes` starts them.
 */
export function realNodeDaemonsDown(stateDir: string, binDir: string): string[] {
  const down: string[] = [];
  const check = (what: string, binary: string, recordFile: string, marker: string) => {
    if (fs.existsSync(recordFile) && runningDaemon({ binary, recordFile, marker }) === undefined)
      down.push(what);
  };
  for (const index of realNodesOnDisk(stateDir)) {
    const plan = realNodePlan(stateDir, index);
    check(
      `containerd of ${plan.name}`,
      path.join(binDir, "containerd"),
      plan.paths.containerdRecord,
      `${plan.dir}/`,
    );
    check(`kubelet of ${plan.name}`, path.join(binDir, "kubelet"), plan.paths.kubeletRecord, `${plan.dir}/`);
  }
  const proxy = kubeProxyPlan(stateDir);
  check("kube-proxy", path.join(binDir, "kube-proxy"), proxy.record, `${proxy.dir}/`);
  const policy = networkPolicyPlan(stateDir);
  // kube-router's record names the bin dir it was started from.
  const netpolBinDir = readDaemonRecord(policy.record)?.binDir;
  if (typeof netpolBinDir === "string")
    check("kube-router", path.join(netpolBinDir, "kube-router"), policy.record, `${policy.dir}/`);
  const registry = registryPlan(stateDir);
  check("the image registry", path.join(binDir, "ring0-registry"), registry.record, registry.config);
  return down;
}
