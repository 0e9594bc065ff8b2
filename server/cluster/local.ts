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
import net from "node:net";
import path from "node:path";
import { createObject, deleteObject, type KubeObject } from "@/server/k8s/apply";
import { type ClusterConnection, clusterHealth, clusterVersion, connectCluster } from "@/server/k8s/cluster";
import { isAlreadyExists, K8sError } from "@/server/k8s/errors";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import { LOCAL_NODE_LABEL, localNodeIndex, localNodeManifest, localNodeName } from "./nodes";
import { CommandError, run } from "./process";

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
const BUILD_TIMEOUT_MS = 90 * 60_000;
const READY_TIMEOUT_MS = 120_000;

function repoRoot(): string {
  return process.cwd();
}

/** The bin dir of scripts/kube-build.sh, building when allowed; progress goes to the logger. */
export async function kubeBinaries(logger: Logger, options: { build?: boolean } = {}): Promise<string> {
  const script = path.join(repoRoot(), "scripts", "kube-build.sh");
  try {
    const printed = await run("bash", [script, "--print-dir"], { timeoutMs: 60_000 });
    return printed.stdout.trim().split("\n").pop() ?? "";
  } catch (error) {
    if (!(error instanceof CommandError) || error.result.code !== 3) throw error;
    if (options.build === false) {
      throw new Error(`Kubernetes binaries are not built yet: run \`npm run kube:build\` (${script})`);
    }
  }
  logger.info("building Kubernetes binaries with scripts/kube-build.sh (many minutes when cold)");
  const built = await run("bash", [script], {
    timeoutMs: BUILD_TIMEOUT_MS,
    onLine: (line) => logger.info(line, { component: "kube-build" }),
  });
  const binDir = built.stdout.trim().split("\n").pop() ?? "";
  if (!binDir || !fs.existsSync(binDir))
    throw new Error(`scripts/kube-build.sh did not print a bin dir (got "${binDir}")`);
  return binDir;
}

/** kwokctl's per-component port settings (the apiserver's comes from the options, if fixed). */
type ComponentPorts = Record<
  "etcdPort" | "etcdPeerPort" | "kwokControllerPort" | "kubeControllerManagerPort" | "kubeSchedulerPort",
  number
> & { kubeApiserverPort?: number };

/** Free ports on 127.0.0.1, held open together so they are distinct, then released. */
async function freeLoopbackPorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.once("error", reject);
          server.listen({ host: "127.0.0.1", port: 0, exclusive: true }, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

async function freeComponentPorts(withApiserver: boolean): Promise<ComponentPorts> {
  const [etcd, etcdPeer, kwok, controllerManager, scheduler, apiserver] = await freeLoopbackPorts(6);
  return {
    etcdPort: etcd!,
    etcdPeerPort: etcdPeer!,
    kwokControllerPort: kwok!,
    kubeControllerManagerPort: controllerManager!,
    kubeSchedulerPort: scheduler!,
    ...(withApiserver ? { kubeApiserverPort: apiserver! } : {}),
  };
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen({ host: "127.0.0.1", port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const detail = lastError instanceof Error ? `: ${lastError.message}` : "";
  throw new Error(`${what} did not happen within ${Math.round(timeoutMs / 1000)} s${detail}`);
}

async function mapLimit<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(limit, queue.length) }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await task(item);
    }),
  );
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

  /**
   * kwokctl and everything it forks (the kwok-controller runs exec sessions) get this environment
   * and nothing else from ours: no host secrets reach simulated containers, and kwokctl reads only
   * its own config under the state dir.
   */
  const kwokctlEnv = (binDir: string): Record<string, string> => ({
    PATH: `${binDir}:/usr/local/bin:/usr/bin:/bin`,
    HOME: path.join(kwokDir, "home"),
    TMPDIR: path.join(kwokDir, "tmp"),
    KWOK_WORKDIR: kwokDir,
    KWOK_RUNTIME: "binary",
    KWOK_KUBE_BINARY_PREFIX: binDir,
    KWOK_BINARY_PREFIX: binDir,
    KWOK_KUBECTL_BINARY: path.join(binDir, "kubectl"),
    LANG: "C.UTF-8",
  });

  const kwokctl = async (binDir: string, args: string[], timeoutMs: number) => {
    fs.mkdirSync(path.join(kwokDir, "home"), { recursive: true });
    fs.mkdirSync(path.join(kwokDir, "tmp"), { recursive: true });
    return run(path.join(binDir, "kwokctl"), ["--name", name, "--config", configPath, ...args], {
      env: kwokctlEnv(binDir),
      cwd: kwokDir,
      timeoutMs,
      onLine: (line) => log.debug(line, { component: "kwokctl" }),
    });
  };

  /** Every binary path explicit, so kwokctl never reaches for a download URL. */
  const writeKwokctlConfig = (binDir: string, ports: ComponentPorts | null = null) => {
    const bin = (file: string) => JSON.stringify(path.join(binDir, file));
    const lines = [
      "# Written by Ring0 (server/cluster/local.ts) on every `up`; edits are overwritten.",
      "apiVersion: config.kwok.x-k8s.io/v1alpha1",
      "kind: KwokctlConfiguration",
      "options:",
      "  runtime: binary",
      "  bindAddress: 127.0.0.1",
      `  cacheDir: ${JSON.stringify(path.join(kwokDir, "cache"))}`,
      `  kubeApiserverBinary: ${bin("kube-apiserver")}`,
      `  kubeControllerManagerBinary: ${bin("kube-controller-manager")}`,
      `  kubeSchedulerBinary: ${bin("kube-scheduler")}`,
      `  kwokControllerBinary: ${bin("kwok")}`,
      `  etcdBinary: ${bin("etcd")}`,
      `  etcdctlBinary: ${bin("etcdctl")}`,
      `  etcdutlBinary: ${bin("etcdutl")}`,
      `  kubectlBinary: ${bin("kubectl")}`,
      `  kectlBinary: ${bin("kectl")}`,
      "  quietPull: true",
      `  enableCRDs: [${KWOK_CRDS.join(", ")}]`,
      ...(options.apiserverPort ? [`  kubeApiserverPort: ${options.apiserverPort}`] : []),
      ...(ports ? Object.entries(ports).map(([key, port]) => `  ${key}: ${port}`) : []),
      "",
    ];
    fs.mkdirSync(kwokDir, { recursive: true });
    fs.writeFileSync(configPath, lines.join("\n"));
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
        writeKwokctlConfig(binDir, await freeComponentPorts(!options.apiserverPort));
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
