/**
 * The vn-agents of a super cluster: one per node, following nodes as they come and go, published
 * through setVnAgentEndpoints() so the syncer can point each vNode's kubelet endpoint at its agent.
 */
import fs from "node:fs";
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { V1Node } from "@/server/k8s/kinds/node";
import { NodeKind } from "@/server/k8s/kinds/node";
import { listAndWatch } from "@/server/k8s/watch";
import { teeLogger } from "@/server/log-ring";
import type { Logger } from "@/server/logger";
import { setVnAgentEndpoints, type VnAgentEndpoint } from "@/server/syncer/contracts";
import { superNamespace as defaultSuperNamespace } from "@/server/syncer/naming";
import { startVnAgent, type VnAgent } from "./agent";
import { vnAgentLogRing } from "./log-rings";
import { ensureVnAgentPki, loadVnAgentPki, type VnAgentPkiSource } from "./pki";
import { openPortBook, vnAgentPortsFile } from "./ports";

export interface VnAgentsOptions {
  superCluster: ClusterConnection;
  /** Ring0's state dir: the PKI lives in <stateDir>/vn-agent-pki/, each node's port in <stateDir>/vn-agent-ports.json. */
  stateDir: string;
  /** Where the PKI is kept (default: the state dir). */
  pki?: VnAgentPkiSource;
  logger: Logger;
  /**
   * How agents call the nodes' kubelets: the CA of their serving certificates and a client
   * certificate (the local world's simulated kubelet demands one). Default: the super cluster's CA
   * and no client certificate.
   */
  kubeletTls?: { ca: string; cert?: string; key?: string };
  /** Default: the syncer's naming. */
  superNamespace?: (tenant: string, namespace: string) => string;
  /** How often the serving certificate is read again (renewed near its end; default 6 h). */
  renewEveryMs?: number;
  /**
   * Addresses each agent listens on besides 127.0.0.1 (same port): the pod API address, where
   * tenant API servers that run as pods reach the agents (the local world with real nodes).
   */
  alsoOn?: string[];
}

export interface VnAgents {
  /** The agents' endpoints by node (the same map as vnAgentEndpoints()). */
  endpoints(): Map<string, VnAgentEndpoint>;
  /** Resolves once the first node list is served by listening agents. */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

/** The CA of the kubeconfig's current cluster (PEM). */
export function clusterCa(conn: ClusterConnection): string {
  const cluster = conn.kubeConfig.getCurrentCluster();
  if (cluster?.caData) return Buffer.from(cluster.caData, "base64").toString("utf8");
  if (cluster?.caFile) return fs.readFileSync(cluster.caFile, "utf8");
  throw new Error(`the kubeconfig of ${conn.name} names no CA; pass kubeletTls to verify the kubelets with`);
}

export async function startVnAgents(options: VnAgentsOptions): Promise<VnAgents> {
  const log = options.logger.child({ component: "vn-agents" });
  const pki = await ensureVnAgentPki(options.pki ?? options.stateDir);
  /** What agents serve with: the PKI's serving certificate as last read (renewed while Ring0 runs). */
  let tls = { cert: pki.serving.cert, key: pki.serving.key, clientCa: pki.clientCa.cert };
  const kubeletTls = options.kubeletTls ?? { ca: clusterCa(options.superCluster) };
  const ports = openPortBook(vnAgentPortsFile(options.stateDir));
  const nodes = new Map<string, V1Node>();
  const agents = new Map<string, Promise<VnAgent | undefined>>();
  const endpoints = new Map<string, VnAgentEndpoint>();
  let stopped = false;
  let markReady: () => void = () => {};
  const readyPromise = new Promise<void>((resolve) => {
    markReady = resolve;
  });

  const publish = () => setVnAgentEndpoints(new Map(endpoints));

  /** On the node's port from before when it is free (vNodes point there), else on a new one. */
  const listen = async (name: string): Promise<VnAgent> => {
    const start = (port?: number) =>
      startVnAgent({
        node: name,
        currentNode: () => nodes.get(name),
        superCluster: options.superCluster,
        superNamespace: options.superNamespace ?? defaultSuperNamespace,
        tls,
        kubeletTls,
        // Operators read each agent's log per node (the node page's "vn-agent log").
        logger: teeLogger(options.logger, vnAgentLogRing(name)),
        ...(port ? { port } : {}),
        ...(options.alsoOn?.length ? { alsoOn: options.alsoOn } : {}),
      });
    const previous = ports.get(name);
    if (previous === undefined) return start();
    try {
      return await start(previous);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
      log.warn("a vn-agent's port from before is taken; it listens on a new one", {
        node: name,
        port: previous,
      });
      return start();
    }
  };

  const open = (name: string) => {
    if (agents.has(name) || stopped) return agents.get(name);
    const starting = listen(name).then(
      (agent) => {
        if (agents.get(name) !== starting || stopped) {
          void agent.close();
          return undefined;
        }
        ports.record(name, agent.port);
        endpoints.set(name, { node: name, host: "localhost", port: agent.port });
        publish();
        return agent;
      },
      (error: unknown) => {
        log.error("starting a vn-agent failed", { node: name, error });
        agents.delete(name);
        return undefined;
      },
    );
    agents.set(name, starting);
    return starting;
  };

  const close = async (name: string) => {
    const agent = agents.get(name);
    agents.delete(name);
    if (endpoints.delete(name)) publish();
    await (await agent)?.close();
  };

  const watch = listAndWatch<V1Node>(
    options.superCluster,
    { path: NodeKind.path() },
    {
      onSync: (items) => {
        const names = new Set(items.map((node) => node.metadata?.name ?? "").filter(Boolean));
        nodes.clear();
        for (const node of items) if (node.metadata?.name) nodes.set(node.metadata.name, node);
        for (const name of [...agents.keys()]) if (!names.has(name)) void close(name);
        ports.keepOnly(names);
        void Promise.all([...names].map(open)).then(() => markReady());
      },
      onEvent: (type, node) => {
        const name = node.metadata?.name;
        if (!name) return;
        if (type === "DELETED") {
          nodes.delete(name);
          ports.forget(name);
          void close(name);
          return;
        }
        nodes.set(name, node);
        void open(name);
      },
      onError: (error) => log.debug("node watch error", { error: error.message }),
    },
  );

  // A certificate near its end is renewed on reading (loadVnAgentPki), and one another replica
  // renewed is taken: running agents serve it to new connections without a restart.
  const renewal = setInterval(
    () => {
      loadVnAgentPki(options.pki ?? options.stateDir).then(
        async (current) => {
          if (current.serving.cert === tls.cert) return;
          tls = { cert: current.serving.cert, key: current.serving.key, clientCa: current.clientCa.cert };
          for (const agent of agents.values()) (await agent)?.reloadTls(tls);
          log.info("the vn-agents serve a renewed certificate");
        },
        (error: unknown) => log.warn("reading the vn-agents' certificate again failed", { error }),
      );
    },
    options.renewEveryMs ?? 6 * 60 * 60 * 1000,
  );
  renewal.unref();

  return {
    endpoints: () => new Map(endpoints),
    ready: () => readyPromise,
    async stop() {
      stopped = true;
      clearInterval(renewal);
      watch.stop();
      await Promise.all([...agents.keys()].map(close));
      setVnAgentEndpoints(null);
    },
  };
}
