/**
 * Ring0's side of the vn-agents the chart runs as a DaemonSet (one pod beside each node's kubelet:
 * ./node-agent.ts), for Ring0 in a cluster. Every replica watches those pods in Ring0's namespace:
 *   - the leader gives each agent pod a serving certificate for its pod address, from the serving CA that
 *     tenant API servers verify agents with, in one Secret (NODE_AGENT_SERVING_SECRET: per node
 *     `node.<node>.crt`/`.key`, and `client-ca.crt`, the CA callers' certificates must chain to).
 *     The agents read that Secret and nothing else of the PKI: no agent holds a CA key. Written with
 *     a create, or a replace of exactly what was read (two replicas never overwrite each other);
 *   - it publishes each node's ready agent (its pod address and port) through setVnAgentEndpoints,
 *     where the syncer points that node's vNodes.
 */
import type { KubeObject } from "@/server/k8s/apply";
import { createObject, readObject, replaceObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isAlreadyExists, isConflict, isNotFound } from "@/server/k8s/errors";
import type { V1Pod } from "@/server/k8s/kinds/node";
import { listAndWatch } from "@/server/k8s/watch";
import type { Logger } from "@/server/logger";
import type { CertificateAndKey } from "@/server/pki/certificates";
import { setVnAgentEndpoints, type VnAgentEndpoint } from "@/server/syncer/contracts";
import {
  ensureVnAgentPki,
  issueNodeAgentServing,
  nodeAgentServingGood,
  type VnAgentPki,
  type VnAgentPkiSource,
} from "./pki";
import type { VnAgents } from "./vn-agents";

/** The Secret of Ring0's namespace the vn-agent pods serve from (kept by helm uninstall, like the PKI's). */
export const NODE_AGENT_SERVING_SECRET = "ring0-vn-agent-serving";
/** The chart's labels on its vn-agent pods (deploy/helm/ring0, the vn-agent DaemonSet). */
export const NODE_AGENT_SELECTOR = "app.kubernetes.io/name=ring0,app.kubernetes.io/component=vn-agent";

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

/** A node's entry in the Secret (prefixed: no node name can take the CA's key). */
export function nodeKey(node: string, suffix: "crt" | "key"): string {
  return `node.${node}.${suffix}`;
}

/** What one node's agent serves with, read from the Secret's data (pure); undefined until it is there. */
export function nodeAgentTls(
  data: Record<string, string> | undefined,
  node: string,
): { cert: string; key: string; clientCa: string } | undefined {
  const text = (key: string) => {
    const value = data?.[key];
    return value ? Buffer.from(value, "base64").toString("utf8") : undefined;
  };
  const cert = text(nodeKey(node, "crt"));
  const key = text(nodeKey(node, "key"));
  const clientCa = text("client-ca.crt");
  return cert && key && clientCa ? { cert, key, clientCa } : undefined;
}

/**
 * The agent pods Ring0 serves, by node (pure): running, not leaving, with an address, the
 * DaemonSet's, not on the host's network. Of two on one
 * node (one replacing the other) the ready one; none while two are ready, or two are starting.
 */
export function nodeAgentPods(pods: Iterable<V1Pod>): Map<string, { ip: string; ready: boolean }> {
  const byNode = new Map<string, { ip: string; ready: boolean }[]>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    const ip = pod.status?.podIP;
    if (!node || !ip || pod.metadata?.deletionTimestamp || pod.status?.phase !== "Running") continue;
    // The DaemonSet's own pods only (a node cannot rewrite who owns a pod), never on the host's network.
    const owner = pod.metadata?.ownerReferences?.find((reference) => reference.controller);
    if (owner?.kind !== "DaemonSet" || owner.apiVersion !== "apps/v1" || pod.spec?.hostNetwork) continue;
    const ready = (pod.status?.conditions ?? []).some(
      (condition) => condition.type === "Ready" && condition.status === "True",
    );
    byNode.set(node, [...(byNode.get(node) ?? []), { ip, ready }]);
  }
  const chosen = new Map<string, { ip: string; ready: boolean }>();
  for (const [node, here] of byNode) {
    const ready = here.filter((agent) => agent.ready);
    const pick = ready.length > 0 ? ready : here;
    if (pick.length === 1) chosen.set(node, pick[0] as { ip: string; ready: boolean });
  }
  return chosen;
}

export interface NodeAgentsOptions {
  superCluster: ClusterConnection;
  /** Ring0's namespace (the DaemonSet's pods and both Secrets are there). */
  namespace: string;
  pki: Exclude<VnAgentPkiSource, string>;
  /** The port every agent pod serves on (RING0_VN_AGENT_PORT). */
  port: number;
  logger: Logger;
  /** Whether this replica issues the certificates (the leader: one writer, one view of the pods). */
  issues?: () => boolean;
  /** How often the Secret is checked again without a pod changing (retries, renewals; default 30 s). */
  recheckEveryMs?: number;
}

export async function startNodeAgents(options: NodeAgentsOptions): Promise<VnAgents> {
  const log = options.logger.child({ component: "vn-agents" });
  const pki = await ensureVnAgentPki(options.pki);
  const pods = new Map<string, V1Pod>();
  let stopped = false;
  let markReady: () => void = () => {};
  const readyPromise = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  let endpoints = new Map<string, VnAgentEndpoint>();
  let running: Promise<void> | null = null;
  let again = false;

  const reconcile = async () => {
    const agents = nodeAgentPods(pods.values());
    endpoints = new Map(
      [...agents]
        .filter(([, agent]) => agent.ready)
        .map(([node, agent]) => [node, { node, host: "localhost", port: options.port, address: agent.ip }]),
    );
    setVnAgentEndpoints(new Map(endpoints));
    if (options.issues?.() ?? true) await issueServing(options, pki, agents, log);
  };

  const schedule = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = reconcile()
      .catch((error: unknown) => log.warn("serving the vn-agent pods failed; trying again", { error }))
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          setTimeout(schedule, 1_000).unref();
        }
      });
  };

  const watch = listAndWatch<V1Pod>(
    options.superCluster,
    { path: `/api/v1/namespaces/${options.namespace}/pods`, labelSelector: NODE_AGENT_SELECTOR },
    {
      onSync: (items) => {
        pods.clear();
        for (const pod of items) if (pod.metadata?.name) pods.set(pod.metadata.name, pod);
        schedule();
        markReady();
      },
      onEvent: (type, pod) => {
        const name = pod.metadata?.name;
        if (!name) return;
        if (type === "DELETED") pods.delete(name);
        else pods.set(name, pod);
        schedule();
      },
      onError: (error) => log.debug("vn-agent pod watch error", { error: error.message }),
    },
  );
  // A failed write is tried again, a new leader issues, and certificates near their end are renewed,
  // without waiting for a pod to change.
  const renewal = setInterval(schedule, options.recheckEveryMs ?? 30_000);
  renewal.unref();

  return {
    endpoints: () => new Map(endpoints),
    ready: () => readyPromise,
    async stop() {
      stopped = true;
      clearInterval(renewal);
      watch.stop();
      await running;
      setVnAgentEndpoints(null);
    },
  };
}

/** Each agent pod's certificate for its address in the Secret, issued where missing, stale or for another address. */
async function issueServing(
  options: NodeAgentsOptions,
  pki: VnAgentPki,
  agents: Map<string, { ip: string }>,
  log: Logger,
): Promise<void> {
  const metadata = { name: NODE_AGENT_SERVING_SECRET, namespace: options.namespace };
  for (let attempt = 0; attempt < 5; attempt++) {
    let secret: Secret | undefined;
    try {
      secret = await readObject<Secret>(options.superCluster, { apiVersion: "v1", kind: "Secret", metadata });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    // Rebuilt from the agents there are now: a node gone takes its key with it.
    const stored = secret?.data ?? {};
    const clientCa = Buffer.from(pki.clientCa.cert).toString("base64");
    const data: Record<string, string> = { "client-ca.crt": clientCa };
    for (const node of agents.keys()) {
      for (const suffix of ["crt", "key"] as const) {
        const value = stored[nodeKey(node, suffix)];
        if (value) data[nodeKey(node, suffix)] = value;
      }
    }
    let changed =
      Object.keys(stored).length !== Object.keys(data).length || stored["client-ca.crt"] !== clientCa;
    const issued: string[] = [];
    for (const [node, { ip }] of agents) {
      const current = nodeAgentTls(data, node);
      const pair: CertificateAndKey | undefined = current && { cert: current.cert, key: current.key };
      if (pair && (await nodeAgentServingGood(pair, pki, ip))) continue;
      const fresh = await issueNodeAgentServing(pki, node, ip);
      data[nodeKey(node, "crt")] = Buffer.from(fresh.cert).toString("base64");
      data[nodeKey(node, "key")] = Buffer.from(fresh.key).toString("base64");
      issued.push(node);
      changed = true;
    }
    if (!changed) return;
    const manifest: Secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        ...metadata,
        labels: {
          "app.kubernetes.io/managed-by": "ring0",
          "app.kubernetes.io/component": "vn-agent-serving",
        },
        ...(secret?.metadata.resourceVersion ? { resourceVersion: secret.metadata.resourceVersion } : {}),
      },
      type: "Opaque",
      data,
    };
    try {
      if (secret) await replaceObject(options.superCluster, manifest);
      else await createObject(options.superCluster, manifest);
      if (issued.length > 0) log.info("vn-agent serving certificates issued", { nodes: issued });
      return;
    } catch (error) {
      // Another replica wrote first: read again, and take what it issued.
      if (!isAlreadyExists(error) && !isConflict(error)) throw error;
    }
  }
  throw new Error(
    `the Secret ${options.namespace}/${NODE_AGENT_SERVING_SECRET} kept changing; trying again later`,
  );
}
