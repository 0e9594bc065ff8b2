/**
 * Connections to Kubernetes clusters (the super cluster and tenant control planes). A connection is a
 * name, the API server URL and a loaded client-node KubeConfig; everything else in server/k8s takes one.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";
import { processSlot } from "@/server/core/process-slots";
import { K8sConfigError, toK8sError } from "./errors";
import { kubeRequest, kubeRequestText } from "./transport";

export type KubeconfigSource = { file: string } | { inline: string } | { inCluster: true };

export interface ClusterConnection {
  /** Ring0's name for the cluster ("super", a tenant name…); part of cache keys. */
  readonly name: string;
  /** API server URL of the kubeconfig's current context. */
  readonly server: string;
  readonly kubeConfig: KubeConfig;
}

function describeSource(source: KubeconfigSource): string {
  if ("file" in source) return `kubeconfig ${source.file}`;
  if ("inline" in source) return "inline kubeconfig";
  return "in-cluster config";
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0]?.trim() || "unknown error";
}

/** Load a kubeconfig; a missing, unparsable or incomplete one throws K8sConfigError naming it. */
export function connectCluster(name: string, source: KubeconfigSource): ClusterConnection {
  const described = describeSource(source);
  const kubeConfig = new KubeConfig();
  try {
    if ("file" in source) {
      if (!fs.existsSync(source.file)) throw new Error("file does not exist");
      kubeConfig.loadFromFile(source.file);
    } else if ("inline" in source) {
      kubeConfig.loadFromString(source.inline);
    } else {
      if (!process.env.KUBERNETES_SERVICE_HOST || !process.env.KUBERNETES_SERVICE_PORT) {
        throw new Error("KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set (not running in a pod)");
      }
      kubeConfig.loadFromCluster();
    }
  } catch (error) {
    throw new K8sConfigError(`${described}: ${firstLine(error)}`, { cause: error });
  }
  const context = kubeConfig.getCurrentContext();
  if (!context && !("inCluster" in source)) {
    throw new K8sConfigError(`${described}: no current-context set`);
  }
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) {
    throw new K8sConfigError(`${described}: current-context "${context}" names no cluster`);
  }
  try {
    new URL(cluster.server);
  } catch {
    throw new K8sConfigError(
      `${described}: cluster "${cluster.name}" has an invalid server URL "${cluster.server}"`,
    );
  }
  reuseDispatcher(kubeConfig);
  return { name, server: cluster.server, kubeConfig };
}

/**
 * client-node 2.0 builds a new undici Agent for every request, so every request opened its own TLS
 * connection (a handshake and a secure context each: about 30% of the syncer's CPU under load).
 * One Agent per cluster and TLS identity keeps connections alive between requests, as client-go
 * does. A changed identity (rotated certificate) gets a new Agent. If a future client-node renames
 * the method, requests simply go back to one connection each.
 */
function reuseDispatcher(kubeConfig: KubeConfig): void {
  const target = kubeConfig as unknown as {
    createDispatcher?: (cluster: unknown, options: object) => unknown;
  };
  if (typeof target.createDispatcher !== "function") return;
  const create = target.createDispatcher.bind(kubeConfig);
  const dispatchers = new Map<string, unknown>();
  target.createDispatcher = (cluster, options) => {
    const key = createHash("sha256")
      .update(JSON.stringify([cluster, options]))
      .digest("hex");
    if (!dispatchers.has(key)) dispatchers.set(key, create(cluster, options));
    return dispatchers.get(key);
  };
}

/*
 * The super cluster connection lives on globalThis: the custom server (server.ts) and Next's route
 * handlers are separate module graphs, and both must see the one connection set at start-up.
 */
const superCluster = processSlot<ClusterConnection | null>("k8s.superCluster");

export function setSuperCluster(conn: ClusterConnection | null): void {
  superCluster.set(conn);
}

export function getSuperCluster(): ClusterConnection | null {
  return superCluster.get() ?? null;
}

export async function clusterVersion(
  conn: ClusterConnection,
): Promise<{ gitVersion: string; platform: string }> {
  const info = await kubeRequest<{ gitVersion: string; platform: string }>(conn, {
    path: "/version",
    timeoutMs: 10_000,
  });
  return { gitVersion: info.gitVersion, platform: info.platform };
}

/** GET /readyz?verbose with a timeout. Never throws: an unreachable server is `ok: false`. */
export async function clusterHealth(
  conn: ClusterConnection,
  options: { timeoutMs?: number } = {},
): Promise<{ ok: boolean; detail: string; latencyMs: number }> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    const { status, text } = await kubeRequestText(conn, {
      path: "/readyz",
      query: { verbose: "true" },
      timeoutMs: options.timeoutMs ?? 5_000,
    });
    const ok = status === 200;
    const failing = text
      .split("\n")
      .filter((line) => line.startsWith("[-]"))
      .join("; ");
    const detail = ok ? "ready" : failing || `readyz returned HTTP ${status}: ${text.trim().slice(0, 200)}`;
    return { ok, detail, latencyMs: latency() };
  } catch (error) {
    return { ok: false, detail: toK8sError(error, conn.server).message, latencyMs: latency() };
  }
}
