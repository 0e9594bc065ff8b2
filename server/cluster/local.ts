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
 * anonymous requests only on health endpoints, no kubelet API from kwok.
 */
import fs from "node:fs";
import path from "node:path";
import { createObject, deleteObject, type KubeObject } from "@/server/k8s/apply";
import { type ClusterConnection, clusterHealth, clusterVersion, connectCluster } from "@/server/k8s/cluster";
import { isAlreadyExists, K8sError } from "@/server/k8s/errors";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import {
  anonymousHealthOnlyFlags,
  closeKwokctlKeys,
  ensureEtcdPki,
  ensureNodePki,
  etcdTlsFlags,
  type NodePki,
  simulatedKubeletFlags,
  writeAuthenticationConfiguration,
} from "./hardening";
import { kubeBinaries, runKwokctl } from "./kwokctl";
import {
  type ComponentFlags,
  componentFlagsOf,
  type KwokctlPorts,
  mergeComponentFlags,
  renderKwokctlConfig,
  withAllComponentFlags,
} from "./kwokctl-config";
import { LOCAL_NODE_LABEL, localNodeIndex, localNodeManifest, localNodeName } from "./nodes";
import { freePortsFor, isPortFree } from "./ports";
import { CommandError, until, waitExited } from "./process";
import { ensureSimKubelet, stopSimKubelet } from "./sim-kubelet";

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
  version?: string;
}

export interface LocalSuperCluster {
  readonly name: string;
  readonly stateDir: string;
  readonly kubeconfigPath: string;
  up(options?: { nodes?: number }): Promise<{ kubeconfig: string; server: string; created: boolean }>;
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
}

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
const SUPER_CLUSTER_PORTS = [
  "etcdPort",
  "etcdPeerPort",
  "kwokControllerPort",
  "kubeControllerManagerPort",
  "kubeSchedulerPort",
] as const;

async function mapLimit<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(limit, queue.length) }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await task(item);
    }),
  );
}

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

  const writeKwokctlConfig = (
    binDir: string,
    ports: KwokctlPorts | null = null,
    flags: ComponentFlags = {},
  ) => {
    fs.mkdirSync(kwokDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(
      configPath,
      renderKwokctlConfig({
        workDir: kwokDir,
        binDir,
        writer: "server/cluster/local.ts, on every `up`",
        ports: {
          ...(options.apiserverPort ? { kubeApiserverPort: options.apiserverPort } : {}),
          ...(ports ?? {}),
        },
        flags,
      }),
    );
  };

  const savedConfigPath = path.join(clusterDir, "kwok.yaml");

  /**
   * Every flag of ./hardening.ts for etcd on these ports, plus what Ring0's tests rely on:
   * PodTemplates (unused by Ring0) bypass the watch cache, so tests can watch from a resourceVersion
   * that etcd compaction removed and see the API server's real 410.
   */
  const wantedFlags = async (etcd: { client: number; peer: number }): Promise<ComponentFlags> =>
    mergeComponentFlags(
      etcdTlsFlags(etcd, await ensureEtcdPki(kwokDir)),
      anonymousHealthOnlyFlags(writeAuthenticationConfiguration(kwokDir)),
      simulatedKubeletFlags(await ensureNodePki(kwokDir)),
      { "kube-apiserver": { "watch-cache-sizes": "podtemplates#0" } },
    );

  /** etcd's ports from the saved cluster config (http or https, whichever it was made with). */
  const savedEtcdPorts = (text: string): { client: number; peer: number } | undefined => {
    const flags = componentFlagsOf(text, "etcd");
    const port = (url: string | undefined) => Number(/:(\d+)$/.exec(url ?? "")?.[1]);
    const client = port(flags?.get("listen-client-urls"));
    const peer = port(flags?.get("listen-peer-urls"));
    return client > 0 && peer > 0 ? { client, peer } : undefined;
  };

  /**
   * Puts a cluster made before these walls (or with other certificates) behind them: its saved config
   * gets every wanted flag. True when the config changed (a running cluster must be restarted).
   */
  const hardenSavedConfig = async (): Promise<boolean> => {
    const text = fs.readFileSync(savedConfigPath, "utf8");
    const ports = savedEtcdPorts(text);
    if (!ports)
      throw new Error(`${savedConfigPath} names no etcd ports: delete the cluster (npm run cluster:down)`);
    const patched = withAllComponentFlags(text, await wantedFlags(ports));
    if ("missing" in patched) {
      throw new Error(
        `${savedConfigPath} has no ${patched.missing} component: delete the cluster (npm run cluster:down)`,
      );
    }
    if (patched.text === text) return false;
    fs.writeFileSync(savedConfigPath, patched.text);
    return true;
  };

  let simKubeletPort: number | undefined;

  /** The simulated kubelet, and every Ring0 node advertising its port. */
  const ensureSimulatedKubelet = async (binDir: string) => {
    simKubeletPort = await ensureSimKubelet({
      kwokDir,
      logsDir: path.join(clusterDir, "logs"),
      podLogsDir: simulatedPodLogsDir(stateDir),
      binDir,
      pki: await ensureNodePki(kwokDir),
      logger: log,
    });
    const list = await kubeRequest<{
      items: {
        metadata: { name: string };
        status?: { daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } };
      }[];
    }>(connect(), {
      path: "/api/v1/nodes",
      query: { labelSelector: `${LOCAL_NODE_LABEL}=true` },
      timeoutMs: 30_000,
    });
    const port = simKubeletPort;
    const stale = list.items.filter((node) => node.status?.daemonEndpoints?.kubeletEndpoint?.Port !== port);
    await mapLimit(stale, 16, async (node) => {
      await kubeRequest(connect(), {
        method: "PATCH",
        path: `/api/v1/nodes/${encodeURIComponent(node.metadata.name)}/status`,
        contentType: "application/merge-patch+json",
        body: { status: { daemonEndpoints: { kubeletEndpoint: { Port: port } } } },
        timeoutMs: 30_000,
      });
    });
  };

  const connect = (): ClusterConnection => {
    connection ??= connectCluster("super", { file: kubeconfigPath });
    return connection;
  };

  /** Nodes this module created, by index. */
  const listLocalNodes = async (): Promise<Map<number, string>> => {
    const list = await kubeRequest<{ items: { metadata: { name: string } }[] }>(connect(), {
      path: "/api/v1/nodes",
      query: { labelSelector: `${LOCAL_NODE_LABEL}=true` },
      timeoutMs: 30_000,
    });
    const byIndex = new Map<number, string>();
    for (const node of list.items) {
      const index = localNodeIndex(node.metadata.name);
      if (index !== undefined) byIndex.set(index, node.metadata.name);
    }
    return byIndex;
  };

  let kubeletVersion = "v1.36.0";
  const createNodes = async (indices: number[]) => {
    await mapLimit(indices, 16, async (index) => {
      try {
        await createObject(connect(), localNodeManifest(index, kubeletVersion, simKubeletPort));
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
    });
  };

  const ensureNodes = async (count: number) => {
    const existing = await listLocalNodes();
    const missing = Array.from({ length: count }, (_, index) => index).filter(
      (index) => !existing.has(index),
    );
    await createNodes(missing);
  };

  const waitReady = async () => {
    const conn = connect();
    await until("the super cluster API server becoming ready", READY_TIMEOUT_MS, async () =>
      (await clusterHealth(conn, { timeoutMs: 3_000 })).ok ? true : undefined,
    );
    // The default service account is what pods need; it shows the controller manager is working.
    await until("the default namespace's service account", READY_TIMEOUT_MS, async () => {
      await kubeRequest(conn, {
        path: "/api/v1/namespaces/default/serviceaccounts/default",
        timeoutMs: 3_000,
      });
      return true;
    });
    kubeletVersion = (await clusterVersion(conn)).gitVersion;
  };

  const waitNodesReady = async (count: number) => {
    await until(`${count} nodes becoming Ready`, READY_TIMEOUT_MS, async () => {
      const list = await kubeRequest<{
        items: { status?: { conditions?: { type: string; status: string }[] } }[];
      }>(connect(), {
        path: "/api/v1/nodes",
        query: { labelSelector: `${LOCAL_NODE_LABEL}=true` },
        timeoutMs: 30_000,
      });
      const ready = list.items.filter((node) =>
        node.status?.conditions?.some(
          (condition) => condition.type === "Ready" && condition.status === "True",
        ),
      ).length;
      return ready >= count ? true : undefined;
    });
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

  const resolveBinDir = async (purpose: "create" | "manage"): Promise<string> => {
    const configured = options.binDir ?? process.env.RING0_KUBE_BIN_DIR;
    if (configured) return path.resolve(configured);
    if (purpose === "manage") {
      const recorded = recordedBinDir();
      if (recorded) return recorded;
    }
    return kubeBinaries(log, { build: purpose === "create" ? (options.build ?? true) : false });
  };

  const cluster: LocalSuperCluster = {
    name,
    stateDir,
    kubeconfigPath,

    async up({ nodes = 3 } = {}) {
      const current = await cluster.status();
      if (current.running && current.server && fs.existsSync(savedConfigPath)) {
        connection = undefined;
        const binDir = await resolveBinDir("manage");
        if (await hardenSavedConfig()) {
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
        await ensureSimulatedKubelet(await resolveBinDir("create"));
        await ensureNodes(nodes);
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
          await hardenSavedConfig();
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
          await wantedFlags({ client: ports.etcdPort, peer: ports.etcdPeerPort }),
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
      await ensureNodes(nodes);
      await waitNodesReady(nodes);
      const server = serverOf();
      log.info(created ? "local super cluster created" : "local super cluster started", {
        server,
        kubeconfigPath,
      });
      return { kubeconfig: kubeconfigPath, server, created };
    },

    async down() {
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
          kubeRequest<{ items: unknown[] }>(conn, { path: "/api/v1/nodes", timeoutMs: 10_000 }),
        ]);
        return {
          running: true,
          kubeconfig: kubeconfigPath,
          server: conn.server,
          nodes: nodes.items.length,
          version: version.gitVersion,
        };
      } catch {
        return { running: true, kubeconfig: kubeconfigPath, server: conn.server };
      }
    },

    async addNodes(count) {
      const existing = await listLocalNodes();
      const start = existing.size === 0 ? 0 : Math.max(...existing.keys()) + 1;
      const indices = Array.from({ length: count }, (_, offset) => start + offset);
      await createNodes(indices);
      return indices.map(localNodeName);
    },

    async scaleNodes(count) {
      const existing = await listLocalNodes();
      const missing = Array.from({ length: count }, (_, index) => index).filter(
        (index) => !existing.has(index),
      );
      const extra = [...existing.entries()]
        .filter(([index]) => index >= count)
        .map(([, nodeName]) => nodeName);
      await createNodes(missing);
      await mapLimit(extra, 16, async (nodeName) => {
        await deleteObject(connect(), { apiVersion: "v1", kind: "Node", metadata: { name: nodeName } });
      });
    },

    connect,

    kubectlPath: async () => path.join(await resolveBinDir("manage"), "kubectl"),

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
