/**
 * The local super cluster: a kwokctl cluster on the binary runtime (etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler and kwok-controller as plain processes on 127.0.0.1)
 * with kwok-simulated nodes. Binaries come from scripts/kube-build.sh, never from the network.
 *
 * State, all under `stateDir`:
 *   <stateDir>/kwok/                       kwokctl's work dir (KWOK_WORKDIR): config, clusters/<name>/ (pki, logs, pids)
 *   <stateDir>/kwok/kwok.yaml              the KwokctlConfiguration Ring0 writes (binaries, 127.0.0.1, CRDs, flags)
 *   <stateDir>/kwok/etcd-pki/              etcd's CA, serving and kube-apiserver client certificates (root-only)
 *   <stateDir>/kwok/node-pki/              the simulated kubelet's serving CA and the CA of its only clients
 *   <stateDir>/kwok/sim-kubelet*           ring0-simkubelet's record and sandbox root (./sim-kubelet.ts)
 *   <stateDir>/super-cluster.kubeconfig    admin kubeconfig of the super cluster
 *   <stateDir>/sim-logs/                   simulated pods' log files, served by ring0-simkubelet
 *
 * Every component runs behind the walls of ./hardening.ts: etcd on TLS with client certificates,
 * anonymous requests only on health endpoints, no kubelet API from kwok. What kwokctl is told is
 * ./super-cluster-config.ts; the nodes are ./node-pool.ts's. This file is the cluster's lifecycle.
 */
import fs from "node:fs";
import path from "node:path";
import type { KubeObject } from "@/server/k8s/apply";
import { type ClusterConnection, clusterHealth, clusterVersion, connectCluster } from "@/server/k8s/cluster";
import { K8sError } from "@/server/k8s/errors";
import { ServiceAccountKind } from "@/server/k8s/kinds/core";
import { NodeKind } from "@/server/k8s/kinds/node";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import { closeKwokctlKeys, ensureEtcdPki, ensureNodePki, type NodePki } from "./hardening";
import { kubeBinaries, netpolBinaries, runKwokctl, sandboxBinaries } from "./kwokctl";
import { type ComponentFlags, componentFlagsOf, type KwokctlPorts } from "./kwokctl-config";
import {
  addLocalNodes,
  alignLocalNodes,
  ensureLocalNodes,
  type LocalNodeTemplate,
  scaleLocalNodes,
  waitLocalNodesReady,
} from "./node-pool";
import { freePortsFor, isPortFree } from "./ports";
import { CommandError, clearExitedPidFiles, kwokctlComponentStates, until, waitExited } from "./process";
import { ensureRealNodes, realNodeDaemonsDown, realNodesOnDisk, removeRealNodes } from "./real-node/fleet";
import { clusterCa } from "./real-node/pki";
import { REAL_NODE_LABEL, realNodesDir } from "./real-node/plan";
import { ensureSimKubelet, stopSimKubelet } from "./sim-kubelet";
import {
  hardenSavedConfig,
  SUPER_CLUSTER_PORTS,
  type SuperClusterFiles,
  superClusterFlags,
  writeSuperClusterConfig,
} from "./super-cluster-config";
import { isTearingDown } from "./teardown";

export interface LocalSuperClusterOptions {
  stateDir: string;
  name?: string;
  logger: Logger;
  /** Directory holding the Kubernetes binaries; default: $RING0_KUBE_BIN_DIR, else scripts/kube-build.sh's cache. */
  binDir?: string;
  /** Build missing binaries with scripts/kube-build.sh (slow when cold). Default true. */
  build?: boolean;
  /** Fixed kube-apiserver port (default: a free one chosen by kwokctl). */
  apiserverPort?: number;
}

export interface LocalSuperClusterStatus {
  running: boolean;
  kubeconfig?: string;
  server?: string;
  nodes?: number;
  /** Of `nodes`: real ones (this host's kubelets) and simulated ones (kwok). */
  realNodes?: number;
  simulatedNodes?: number;
  version?: string;
}

export interface LocalSuperCluster {
  readonly name: string;
  readonly stateDir: string;
  readonly kubeconfigPath: string;
  /** Start (or reuse) it with `nodes` simulated and `realNodes` real nodes (this host's kubelets). */
  up(options?: {
    nodes?: number;
    realNodes?: number;
  }): Promise<{ kubeconfig: string; server: string; created: boolean }>;
  down(): Promise<void>;
  status(): Promise<LocalSuperClusterStatus>;
  /** Add `count` nodes after the highest existing one; resolves with their names. */
  addNodes(count: number): Promise<string[]>;
  /** Make exactly `count` Ring0 nodes exist (ring0-node-0 … count-1). */
  scaleNodes(count: number): Promise<void>;
  /** The connection to the running cluster (throws when it is not up). */
  connect(): ClusterConnection;
  /** etcd's client URL and a client certificate of its CA (for tests that compact etcd). */
  etcdClient(): Promise<EtcdClient | undefined>;
  /** What vn-agents need to call the simulated nodes' kubelet API: its CA and their client certificate. */
  kubeletClient(): Promise<KubeletClientTls>;
  /** The kubectl of the binaries this cluster runs on. */
  kubectlPath(): Promise<string>;
  /**
   * What of a cluster that runs has exited: kwokctl's components and the real nodes' daemons
   * (files and /proc only; cheap enough to ask every second). Empty when it is not up at all.
   */
  faults(): Promise<string[]>;
  /** Starts again what `faults` names, beside what still runs; resolves with what was down. */
  heal(): Promise<string[]>;
}

/** The components kwokctl runs for the local super cluster. */
export const SUPER_CLUSTER_COMPONENTS = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kwok-controller",
] as const;

export interface EtcdClient {
  endpoint: string;
  ca: string;
  cert: string;
  key: string;
}

export interface KubeletClientTls {
  /** CA of the kubelets' serving certificates. */
  ca: string;
  cert: string;
  key: string;
}

/** Simulated pods' log files (<dir>/<namespace>/<pod>.log), written by Ring0, served by ring0-simkubelet. */
export function simulatedPodLogsDir(stateDir: string): string {
  return path.join(path.resolve(stateDir), "sim-logs");
}

const CREATE_TIMEOUT_MS = 5 * 60_000;
const READY_TIMEOUT_MS = 120_000;

/** A component's log file of the local super cluster (kwokctl writes one per process). */
export function localClusterLogFile(
  stateDir: string,
  component: "kwok-controller" | "kube-apiserver" | "etcd" | "kube-scheduler" | "kube-controller-manager",
  name = "ring0",
): string {
  return path.join(path.resolve(stateDir), "kwok", "clusters", name, "logs", `${component}.log`);
}

export function localSuperCluster(options: LocalSuperClusterOptions): LocalSuperCluster {
  const name = options.name ?? "ring0";
  const stateDir = path.resolve(options.stateDir);
  const kwokDir = path.join(stateDir, "kwok");
  const clusterDir = path.join(kwokDir, "clusters", name);
  const configPath = path.join(kwokDir, "kwok.yaml");
  const kubeconfigPath = path.join(stateDir, "super-cluster.kubeconfig");
  // The bin dir a cluster was created with: stopping it must not depend on today's build hash.
  const binDirRecord = path.join(kwokDir, "bin-dir");
  const log = options.logger.child({ component: "local-super-cluster", cluster: name });
  let connection: ClusterConnection | undefined;

  const kwokctl = (binDir: string, args: string[], timeoutMs: number) =>
    runKwokctl({ workDir: kwokDir, name, configPath }, binDir, args, { timeoutMs, logger: log });

  const files: SuperClusterFiles = {
    kwokDir,
    configPath,
    savedConfigPath: path.join(clusterDir, "kwok.yaml"),
  };
  const { savedConfigPath } = files;
  const writeKwokctlConfig = (binDir: string, ports?: KwokctlPorts, flags?: ComponentFlags) =>
    writeSuperClusterConfig(files, binDir, options.apiserverPort, ports, flags);

  let simKubeletPort: number | undefined;

  /** The simulated kubelet, and every Ring0 node advertising its port. */
  const ensureSimulatedKubelet = async (binDir: string) => {
    const port = await ensureSimKubelet({
      kwokDir,
      logsDir: path.join(clusterDir, "logs"),
      podLogsDir: simulatedPodLogsDir(stateDir),
      binDir,
      pki: await ensureNodePki(kwokDir),
      logger: log,
    });
    simKubeletPort = port;
  };

  const connect = (): ClusterConnection => {
    connection ??= connectCluster("super", { file: kubeconfigPath });
    return connection;
  };

  let kubeletVersion = "v1.36.0";
  let simulatedTaint = false;
  const nodeTemplate = (): LocalNodeTemplate => ({
    kubeletVersion,
    kubeletPort: simKubeletPort,
    simulatedTaint,
  });

  /** Simulated nodes as wanted (aligned with the template), then exactly `realNodes` real ones. */
  const ensureNodes = async (binDir: string, nodes: number, realNodes: number) => {
    simulatedTaint = realNodes > 0;
    await ensureLocalNodes(connect(), nodes, nodeTemplate());
    await alignLocalNodes(connect(), nodeTemplate());
    await ensureRealNodes(stateDir, realNodes, await realNodeContext(binDir, realNodes));
  };

  /** What real nodes are started with. */
  const realNodeContext = async (binDir: string, realNodes: number, build = options.build ?? true) => ({
    binDir,
    // gVisor for pods of the ring0-gvisor runtime class (built once, about 2 minutes cold).
    // and kube-router for NetworkPolicies (built once, about 3 minutes cold).
    ...(realNodes > 0
      ? {
          sandboxBinDir: await sandboxBinaries(log, { build }),
          netpolBinDir: await netpolBinaries(log, { build }),
        }
      : {}),
    server: serverOf(),
    clusterCa: clusterCa(path.join(clusterDir, "pki")),
    nodePki: await ensureNodePki(kwokDir),
    logger: log,
    connection: connect(),
  });

  const waitReady = async () => {
    const conn = connect();
    await until("the super cluster API server becoming ready", READY_TIMEOUT_MS, async () =>
      (await clusterHealth(conn, { timeoutMs: 3_000 })).ok ? true : undefined,
    );
    // The default service account is what pods need; it shows the controller manager is working.
    await until("the default namespace's service account", READY_TIMEOUT_MS, async () => {
      await kubeRequest(conn, {
        path: ServiceAccountKind.path({ namespace: "default", name: "default" }),
        timeoutMs: 3_000,
      });
      return true;
    });
    kubeletVersion = (await clusterVersion(conn)).gitVersion;
  };

  const serverOf = () => connect().server;

  const recordedBinDir = (): string | undefined => {
    try {
      const dir = fs.readFileSync(binDirRecord, "utf8").trim();
      return fs.existsSync(path.join(dir, "kwokctl")) ? dir : undefined;
    } catch {
      return undefined;
    }
  };

  const resolveBinDir = async (
    purpose: "create" | "manage",
    build = options.build ?? true,
  ): Promise<string> => {
    const configured = options.binDir ?? process.env.RING0_KUBE_BIN_DIR;
    if (configured) return path.resolve(configured);
    if (purpose === "manage") {
      const recorded = recordedBinDir();
      if (recorded) return recorded;
    }
    return kubeBinaries(log, { build: purpose === "create" ? build : false });
  };

  const cluster: LocalSuperCluster = {
    name,
    stateDir,
    kubeconfigPath,

    async up({ nodes = 3, realNodes = 0 } = {}) {
      const current = await cluster.status();
      if (current.running && current.server && fs.existsSync(savedConfigPath)) {
        connection = undefined;
        const binDir = await resolveBinDir("manage");
        // Addresses before flags: once the API server prefers InternalDNS, then InternalIP, a
        // simulated node must already list localhost first, or it would dial its TEST-NET InternalIP.
        await alignLocalNodes(connect(), nodeTemplate(), { withTaints: false });
        if (await hardenSavedConfig(files)) {
          // Made before the walls of ./hardening.ts (or with other certificates): restarted behind them.
          log.info("restarting the local super cluster behind its walls (etcd TLS, no anonymous access)");
          writeKwokctlConfig(binDir);
          await kwokctl(binDir, ["stop", "cluster"], 120_000);
          await kwokctl(binDir, ["start", "cluster", "--timeout", "3m"], CREATE_TIMEOUT_MS);
          connection = undefined;
          await waitReady();
        }
        closeKwokctlKeys(path.join(clusterDir, "pki"));
        // Ring0's own binary comes from today's build, whatever the cluster was made with.
        const today = await resolveBinDir("create");
        await ensureSimulatedKubelet(today);
        await ensureNodes(today, nodes, realNodes);
        log.debug("reusing running local super cluster", { server: current.server });
        return { kubeconfig: kubeconfigPath, server: current.server, created: false };
      }
      const binDir = await resolveBinDir("create");
      writeKwokctlConfig(binDir);
      fs.writeFileSync(binDirRecord, `${binDir}\n`);
      connection = undefined;
      let created = false;
      if (fs.existsSync(savedConfigPath) && fs.existsSync(kubeconfigPath)) {
        // Stopped (e.g. after a reboot): start the same cluster with its data.
        log.info("starting the stopped local super cluster", { stateDir });
        try {
          await hardenSavedConfig(files);
          await kwokctl(binDir, ["start", "cluster", "--timeout", "3m"], CREATE_TIMEOUT_MS);
        } catch (error) {
          log.warn("restarting the local super cluster failed; recreating it", { error });
          await kwokctl(binDir, ["delete", "cluster"], 120_000).catch(() => undefined);
        }
      }
      if (!fs.existsSync(savedConfigPath) || !(await cluster.status()).running) {
        if (options.apiserverPort && !(await isPortFree(options.apiserverPort))) {
          throw new Error(
            `port ${options.apiserverPort} on 127.0.0.1 is in use: stop what listens there or choose another apiserver port`,
          );
        }
        // Ports chosen here on 127.0.0.1, so kwokctl never probes for free ones on all interfaces.
        const ports = options.apiserverPort
          ? await freePortsFor(SUPER_CLUSTER_PORTS)
          : await freePortsFor([...SUPER_CLUSTER_PORTS, "kubeApiserverPort"]);
        writeKwokctlConfig(
          binDir,
          ports,
          await superClusterFlags(kwokDir, { client: ports.etcdPort, peer: ports.etcdPeerPort }),
        );
        log.info("creating the local super cluster (kwokctl, binary runtime)", { stateDir, binDir });
        fs.rmSync(kubeconfigPath, { force: true });
        try {
          await kwokctl(
            binDir,
            [
              "create",
              "cluster",
              "--runtime",
              "binary",
              "--kubeconfig",
              kubeconfigPath,
              "--wait",
              "2m",
              "--timeout",
              "4m",
            ],
            CREATE_TIMEOUT_MS,
          );
        } catch (error) {
          const text = error instanceof CommandError ? `${error.result.stderr}\n${error.result.stdout}` : "";
          const port = /(?:127\.0\.0\.1|0\.0\.0\.0|\[::\]):(\d+): bind: address already in use/.exec(
            text,
          )?.[1];
          await kwokctl(binDir, ["delete", "cluster"], 120_000).catch(() => undefined);
          if (port)
            throw new Error(
              `creating the local super cluster failed: port ${port} on 127.0.0.1 is already in use`,
            );
          throw error;
        }
        created = true;
      }
      closeKwokctlKeys(path.join(clusterDir, "pki"));
      connection = undefined;
      await waitReady();
      await ensureSimulatedKubelet(binDir);
      await ensureNodes(binDir, nodes, realNodes);
      await waitLocalNodesReady(connect(), nodes, READY_TIMEOUT_MS);
      const server = serverOf();
      log.info(created ? "local super cluster created" : "local super cluster started", {
        server,
        kubeconfigPath,
      });
      return { kubeconfig: kubeconfigPath, server, created };
    },

    async down() {
      if (fs.existsSync(realNodesDir(stateDir))) {
        const left = await removeRealNodes(stateDir, await resolveBinDir("manage"), log);
        if (left.length > 0) log.warn("real nodes left pieces on this host", { left });
      }
      const simKubelet = stopSimKubelet(kwokDir);
      if (!fs.existsSync(clusterDir)) {
        fs.rmSync(kubeconfigPath, { force: true });
        if (simKubelet) await waitExited([simKubelet]);
        return;
      }
      const binDir = await resolveBinDir("manage");
      writeKwokctlConfig(binDir);
      await kwokctl(binDir, ["delete", "cluster"], 120_000);
      if (simKubelet) await waitExited([simKubelet]);
      fs.rmSync(kubeconfigPath, { force: true });
      connection = undefined;
      log.info("local super cluster deleted", { stateDir });
    },

    async status() {
      if (!fs.existsSync(kubeconfigPath) || !fs.existsSync(clusterDir)) return { running: false };
      let conn: ClusterConnection;
      try {
        conn = connectCluster("super", { file: kubeconfigPath });
      } catch {
        return { running: false, kubeconfig: kubeconfigPath };
      }
      const health = await clusterHealth(conn, { timeoutMs: 2_000 });
      if (!health.ok) return { running: false, kubeconfig: kubeconfigPath, server: conn.server };
      try {
        const [version, nodes] = await Promise.all([
          clusterVersion(conn),
          kubeRequest<{ items: { metadata: { labels?: Record<string, string> } }[] }>(conn, {
            path: NodeKind.path(),
            timeoutMs: 10_000,
          }),
        ]);
        const realNodes = nodes.items.filter(
          (node) => node.metadata.labels?.[REAL_NODE_LABEL] === "true",
        ).length;
        return {
          running: true,
          kubeconfig: kubeconfigPath,
          server: conn.server,
          nodes: nodes.items.length,
          realNodes,
          simulatedNodes: nodes.items.length - realNodes,
          version: version.gitVersion,
        };
      } catch {
        return { running: true, kubeconfig: kubeconfigPath, server: conn.server };
      }
    },

    addNodes: (count) => addLocalNodes(connect(), count, nodeTemplate()),

    scaleNodes: (count) => scaleLocalNodes(connect(), count, nodeTemplate()),

    connect,

    kubectlPath: async () => path.join(await resolveBinDir("manage"), "kubectl"),

    async faults() {
      if (!fs.existsSync(savedConfigPath) || isTearingDown(stateDir)) return [];
      const states = kwokctlComponentStates(clusterDir, SUPER_CLUSTER_COMPONENTS);
      const values = Object.values(states);
      // Stopped on purpose (cluster:down, or never started): nothing to heal.
      if (values.every((state) => state === "stopped")) return [];
      const down = SUPER_CLUSTER_COMPONENTS.filter((component) => states[component] !== "running");
      const binDir = recordedBinDir();
      const daemons = binDir ? realNodeDaemonsDown(stateDir, binDir) : [];
      return [...down, ...daemons];
    },

    async heal() {
      const down = await cluster.faults();
      if (down.length === 0) return [];
      log.warn("parts of the local super cluster exited; starting them again", { down });
      const kwokctlParts = down.filter((part) =>
        (SUPER_CLUSTER_COMPONENTS as readonly string[]).includes(part),
      );
      if (kwokctlParts.length > 0) {
        clearExitedPidFiles(clusterDir, SUPER_CLUSTER_COMPONENTS);
        await kwokctl(
          await resolveBinDir("manage"),
          ["start", "cluster", "--timeout", "2m"],
          CREATE_TIMEOUT_MS,
        );
        connection = undefined;
        await waitReady();
      }
      const realNodes = realNodesOnDisk(stateDir).length;
      if (realNodes > 0 && kwokctlParts.length < down.length) {
        await ensureRealNodes(
          stateDir,
          realNodes,
          // Never a build from here (minutes on this host): what is missing is reported instead.
          await realNodeContext(await resolveBinDir("create", false), realNodes, false),
        );
      }
      return down;
    },

    async etcdClient() {
      let text: string;
      try {
        text = fs.readFileSync(savedConfigPath, "utf8");
      } catch {
        return undefined;
      }
      const url = componentFlagsOf(text, "etcd")?.get("listen-client-urls");
      if (!url) return undefined;
      const pki = await ensureEtcdPki(kwokDir);
      return {
        endpoint: url,
        ca: pki["etcd-ca"].cert,
        cert: pki["apiserver-etcd-client"].cert,
        key: pki["apiserver-etcd-client"].key,
      };
    },

    async kubeletClient() {
      const pki: NodePki = await ensureNodePki(kwokDir);
      return {
        ca: pki["kubelet-ca"].cert,
        cert: pki["vn-agent-kubelet-client"].cert,
        key: pki["vn-agent-kubelet-client"].key,
      };
    },
  };
  return cluster;
}

/** True when `error` says the cluster could not be reached (for CLI messages). */
export function isClusterDown(error: unknown): boolean {
  return error instanceof K8sError && error.reason === "Unreachable";
}

export type { KubeObject };
/** Re-exported for callers that found it here first. */
export { kubeBinaries };
