/**
 * The local super cluster: a kwokctl cluster on the binary runtime (etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler and kwok-controller as plain processes on 127.0.0.1)
 * with kwok-simulated nodes. Binaries come from scripts/kube-build.sh, never from the network.
 *
 * State, all under `stateDir`:
 *   <stateDir>/kwok/                       kwokctl's work dir (KWOK_WORKDIR): config, clusters/<name>/ (pki, logs, pids)
 *   <stateDir>/kwok/kwok.yaml              the KwokctlConfiguration Ring0 writes (binaries, 127.0.0.1, CRDs)
 *   <stateDir>/super-cluster.kubeconfig    admin kubeconfig of the super cluster
 *   <stateDir>/kwok-exec/                  work dirs and log files for kwok's simulated exec/logs
 */
import fs from "node:fs";
import path from "node:path";
import { createObject, deleteObject, type KubeObject } from "@/server/k8s/apply";
import { type ClusterConnection, clusterHealth, clusterVersion, connectCluster } from "@/server/k8s/cluster";
import { isAlreadyExists, K8sError } from "@/server/k8s/errors";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import {
  freePortsFor,
  isPortFree,
  type KwokctlPorts,
  kubeBinaries,
  renderKwokctlConfig,
  runKwokctl,
  until,
} from "./kwokctl";
import { LOCAL_NODE_LABEL, localNodeIndex, localNodeManifest, localNodeName } from "./nodes";
import { CommandError } from "./process";

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
  /** etcd's client URL (for tests that compact etcd). */
  etcdEndpoint(): string | undefined;
  /** The kubectl of the binaries this cluster runs on. */
  kubectlPath(): Promise<string>;
}

const KWOK_CRDS = ["Logs", "ClusterLogs", "Exec", "ClusterExec"];
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

  const writeKwokctlConfig = (binDir: string, ports: KwokctlPorts | null = null) => {
    fs.mkdirSync(kwokDir, { recursive: true });
    fs.writeFileSync(
      configPath,
      renderKwokctlConfig({
        workDir: kwokDir,
        binDir,
        writer: "server/cluster/local.ts, on every `up`",
        enableCRDs: KWOK_CRDS,
        ports: {
          ...(options.apiserverPort ? { kubeApiserverPort: options.apiserverPort } : {}),
          ...(ports ?? {}),
        },
      }),
    );
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
        await createObject(connect(), localNodeManifest(index, kubeletVersion));
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
      if (current.running && current.server) {
        connection = undefined;
        await ensureNodes(nodes);
        log.debug("reusing running local super cluster", { server: current.server });
        return { kubeconfig: kubeconfigPath, server: current.server, created: false };
      }
      const binDir = await resolveBinDir("create");
      writeKwokctlConfig(binDir);
      fs.writeFileSync(binDirRecord, `${binDir}\n`);
      connection = undefined;
      let created = false;
      if (fs.existsSync(path.join(clusterDir, "kwok.yaml")) && fs.existsSync(kubeconfigPath)) {
        // Stopped (e.g. after a reboot): start the same cluster with its data.
        log.info("starting the stopped local super cluster", { stateDir });
        try {
          await kwokctl(binDir, ["start", "cluster", "--timeout", "3m"], CREATE_TIMEOUT_MS);
        } catch (error) {
          log.warn("restarting the local super cluster failed; recreating it", { error });
          await kwokctl(binDir, ["delete", "cluster"], 120_000).catch(() => undefined);
        }
      }
      if (!fs.existsSync(path.join(clusterDir, "kwok.yaml")) || !(await cluster.status()).running) {
        if (options.apiserverPort && !(await isPortFree(options.apiserverPort))) {
          throw new Error(
            `port ${options.apiserverPort} on 127.0.0.1 is in use: stop what listens there or choose another apiserver port`,
          );
        }
        // Ports chosen here on 127.0.0.1, so kwokctl never probes for free ones on all interfaces.
        writeKwokctlConfig(
          binDir,
          options.apiserverPort
            ? await freePortsFor(SUPER_CLUSTER_PORTS)
            : await freePortsFor([...SUPER_CLUSTER_PORTS, "kubeApiserverPort"]),
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
              // PodTemplates (unused by Ring0) bypass the watch cache, so tests can watch from a
              // resourceVersion that etcd compaction removed and see the API server's real 410.
              "--extra-args",
              "kube-apiserver=watch-cache-sizes=podtemplates#0",
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
      connection = undefined;
      await waitReady();
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
      if (!fs.existsSync(clusterDir)) {
        fs.rmSync(kubeconfigPath, { force: true });
        return;
      }
      const binDir = await resolveBinDir("manage");
      writeKwokctlConfig(binDir);
      await kwokctl(binDir, ["delete", "cluster"], 120_000);
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

    etcdEndpoint() {
      try {
        const text = fs.readFileSync(path.join(clusterDir, "kwok.yaml"), "utf8");
        const url = /--listen-client-urls=(http:\/\/[0-9.]+:\d+)/.exec(text)?.[1];
        return url?.replace("0.0.0.0", "127.0.0.1");
      } catch {
        return undefined;
      }
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
