/**
 * One real node's lifecycle: its containerd and kubelet started as detached processes (they outlive
 * Ring0 like the cluster's own), and torn down so that no process, mount, bridge, cgroup, network
 * namespace or libcni entry stays behind.
 */
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import type { Logger } from "@/server/logger";
import { ensureDaemon, stopDaemon } from "../daemon";
import type { NodePki } from "../hardening";
import { freeLoopbackPorts } from "../ports";
import { killProcessesMentioning } from "../process";
import {
  cniConflist,
  containerdConfig,
  kubeconfigYaml,
  kubeletConfig,
  runscConfig,
  SANDBOX_HANDLER,
  SANDBOX_NODE_LABEL,
} from "./configs";
import {
  ensureBridge,
  ensureCgroupRoot,
  processesInCgroupRoot,
  removeBridge,
  removeCgroupRoot,
  removeCniCache,
  unmountUnder,
} from "./host";
import { importNodeImages } from "./images";
import { ensureRealNodePki } from "./pki";
import { REAL_NODE_LABEL, type RealNodePlan } from "./plan";

export interface RealNodeContext {
  binDir: string;
  /** The super cluster's API server URL. */
  server: string;
  /** kwokctl's cluster CA (signs the API server's certificate and its clients'). */
  clusterCa: { cert: string; key: string; certFile: string };
  nodePki: NodePki;
  logger: Logger;
  /** gVisor's binaries (scripts/sandbox-build.sh): the node then also runs pods under runsc. */
  sandboxBinDir?: string;
  /** kube-router (scripts/netpol-build.sh): NetworkPolicies are then enforced (./network-policy.ts). */
  netpolBinDir?: string;
}

/** The environment of a node's processes: its binaries and the system's, nothing of Ring0's. */
export function daemonEnv(binDir: string, home: string): Record<string, string> {
  return { PATH: `${binDir}:/usr/sbin:/usr/bin:/sbin:/bin`, HOME: home, LANG: "C.UTF-8" };
}

export function httpOk(url: string, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get(url, { timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on("timeout", () => request.destroy());
    request.on("error", () => resolve(false));
  });
}

function socketAnswers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(file);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

const containerdSpec = (context: RealNodeContext, plan: RealNodePlan) => ({
  name: `containerd of ${plan.name} serving`,
  binary: path.join(context.binDir, "containerd"),
  args: ["--config", plan.paths.containerdConfig, "--log-level", "warn"],
  env: daemonEnv(context.binDir, plan.dir),
  cwd: plan.dir,
  recordFile: plan.paths.containerdRecord,
  inputs: [plan.paths.containerdConfig],
  logFile: path.join(plan.paths.logs, "containerd.log"),
  marker: `${plan.dir}/`,
  ready: () => socketAnswers(plan.paths.containerdSocket),
});

function healthzPortOf(configFile: string): number | undefined {
  try {
    const port = Number(/^healthzPort: (\d+)$/m.exec(fs.readFileSync(configFile, "utf8"))?.[1]);
    return port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

const kubeletSpec = (context: RealNodeContext, plan: RealNodePlan, healthzPort: number) => ({
  name: `kubelet of ${plan.name} serving`,
  binary: path.join(context.binDir, "kubelet"),
  args: [
    `--config=${plan.paths.kubeletConfig}`,
    `--kubeconfig=${plan.paths.kubeletKubeconfig}`,
    `--root-dir=${plan.paths.kubeletRoot}`,
    `--hostname-override=${plan.name}`,
    `--node-ip=${plan.nodeIp}`,
    `--node-labels=${[`${REAL_NODE_LABEL}=true`, ...(context.sandboxBinDir ? [`${SANDBOX_NODE_LABEL}=${SANDBOX_HANDLER}`] : [])].join(",")}`,
    "--v=1",
  ],
  env: daemonEnv(context.binDir, plan.dir),
  cwd: plan.dir,
  recordFile: plan.paths.kubeletRecord,
  // Its configuration and every certificate it loads once: a change restarts it (its pods keep running).
  inputs: [
    plan.paths.kubeletConfig,
    plan.paths.kubeletKubeconfig,
    ...["serving.crt", "client.crt", "cluster-ca.crt"].map((file) => path.join(plan.paths.kubeletPki, file)),
    context.nodePki["kubelet-client-ca"].certFile,
  ],
  logFile: path.join(plan.paths.logs, "kubelet.log"),
  marker: `${plan.dir}/`,
  ready: () => httpOk(`http://127.0.0.1:${healthzPort}/healthz`),
  readyTimeoutMs: 90_000,
});

/** Writes `text` to `file` unless it already holds exactly that (configs are rewritten on every `up`). */
export function writeIfChanged(file: string, text: string, mode = 0o644): void {
  try {
    if (fs.readFileSync(file, "utf8") === text) return;
  } catch {
    // new
  }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, text, { mode });
}

/** Makes the node run: host pieces, configs, certificates, containerd with the images, kubelet. */
export async function ensureRealNode(
  context: RealNodeContext,
  plan: RealNodePlan,
  archives: string[],
): Promise<void> {
  const { paths } = plan;
  fs.mkdirSync(plan.dir, { recursive: true, mode: 0o700 });
  for (const dir of [
    paths.containerdRoot,
    paths.containerdState,
    path.dirname(paths.containerdSocket),
    paths.cniConfDir,
    paths.cniIpamDir,
    paths.kubeletRoot,
    paths.staticPods,
    paths.podLogs,
    paths.logs,
  ]) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  await ensureBridge(plan);
  ensureCgroupRoot(plan);
  if (context.sandboxBinDir) writeIfChanged(paths.runscConfig, runscConfig(plan, context.sandboxBinDir));
  writeIfChanged(paths.containerdConfig, containerdConfig(plan, context.sandboxBinDir));
  writeIfChanged(path.join(paths.cniConfDir, "10-ring0.conflist"), cniConflist(plan));
  const pki = await ensureRealNodePki(plan, context.clusterCa, context.nodePki);
  const caFile = path.join(paths.kubeletPki, "cluster-ca.crt");
  writeIfChanged(caFile, context.clusterCa.cert);
  writeIfChanged(
    paths.kubeletKubeconfig,
    kubeconfigYaml({
      server: context.server,
      caFile,
      certFile: pki.client.certFile,
      keyFile: pki.client.keyFile,
      user: `system:node:${plan.name}`,
    }),
    0o600,
  );
  const healthzPort = healthzPortOf(paths.kubeletConfig) ?? ((await freeLoopbackPorts(1))[0] as number);
  writeIfChanged(
    paths.kubeletConfig,
    kubeletConfig(plan, {
      clientCaFile: context.nodePki["kubelet-client-ca"].certFile,
      tlsCertFile: pki.serving.certFile,
      tlsKeyFile: pki.serving.keyFile,
      healthzPort,
    }),
  );
  const containerd = await ensureDaemon(containerdSpec(context, plan));
  await importNodeImages(context.binDir, plan, archives, context.logger);
  const kubelet = await ensureDaemon(kubeletSpec(context, plan, healthzPort));
  if (containerd.started || kubelet.started) {
    context.logger.info("real node running", {
      node: plan.name,
      nodeIp: plan.nodeIp,
      containerd: containerd.pid,
      kubelet: kubelet.pid,
    });
  }
}

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/**
 * Stops the node and removes what it made on the host. Returns what could not be removed (empty
 * when the host is as before the node).
 */
export async function removeRealNode(binDir: string, plan: RealNodePlan, logger: Logger): Promise<string[]> {
  await stopDaemon({
    binary: path.join(binDir, "kubelet"),
    recordFile: plan.paths.kubeletRecord,
    marker: `${plan.dir}/`,
  });
  // The pods' processes (containers and sandboxes) first: containerd's shims would keep them.
  killAll(processesInCgroupRoot(plan));
  await stopDaemon({
    binary: path.join(binDir, "containerd"),
    recordFile: plan.paths.containerdRecord,
    marker: `${plan.dir}/`,
  });
  // Shims, and anything else started for this node (they name its state dir).
  await killProcessesMentioning(`${plan.dir}/`);
  for (let round = 0; round < 20 && processesInCgroupRoot(plan).length > 0; round++) {
    killAll(processesInCgroupRoot(plan));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const left: string[] = [];
  left.push(...(await unmountUnder(plan.dir)).map((point) => `mount ${point}`));
  const runtimeLeft = (await unmountUnder(plan.runtimeDir)).map((point) => `mount ${point}`);
  if (runtimeLeft.length === 0) fs.rmSync(plan.runtimeDir, { recursive: true, force: true });
  left.push(...runtimeLeft);
  left.push(...removeCgroupRoot(plan).map((dir) => `cgroup ${dir}`));
  await removeBridge(plan).catch((error: unknown) => left.push(`bridge ${plan.bridge}: ${String(error)}`));
  removeCniCache(plan);
  if (left.length === 0) fs.rmSync(plan.dir, { recursive: true, force: true });
  else logger.warn("real node left pieces behind", { node: plan.name, left });
  return left;
}
