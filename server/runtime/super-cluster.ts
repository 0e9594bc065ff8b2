import path from "node:path";
import { localClusterLogFile, localSuperCluster } from "@/server/cluster/local";
import { defaultRealNodes } from "@/server/cluster/real-node/host";
import { startSimulatedPodLogs } from "@/server/cluster/simulated-pods";
import { runPeriodically } from "@/server/controllers/periodic";
import type { Env } from "@/server/env";
import { type ClusterConnection, clusterHealth, connectCluster, setSuperCluster } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { setSuperClusterHealing, setSuperClusterProblem } from "@/server/k8s/super-cluster-state";
import type { Logger } from "@/server/logger";
import { kwokLogProvider, realNodeLogProvider } from "@/server/streams/node-logs";
import { registerNodeLogProvider } from "@/server/streams/sources";

/** RING0_REAL_NODES as a count: "auto" is one where this host can run a real node, else none (said once). */
function realNodesWanted(setting: Env["RING0_REAL_NODES"], log: Logger): number {
  if (setting !== "auto") return Number(setting);
  const { count, problems } = defaultRealNodes();
  if (problems.length > 0)
    log.warn(`No real node on this host, simulated nodes only: ${problems.join("; ")}`);
  return count;
}

/**
 * Connects the super cluster: SUPER_KUBECONFIG when set, else the pod's own cluster
 * (RING0_SUPER_CLUSTER=in-cluster), else the local kwok cluster (started, or reused when already
 * running). Never throws: a broken or unreachable cluster is one clear log
 * line and a red dependency in /api/ready, so Ring0 keeps serving and recovers once it is fixed.
 */
export async function connectSuperCluster(
  config: Env,
  log: Logger,
): Promise<{ connection: ClusterConnection | null; stop(): void }> {
  setSuperClusterProblem(null);
  let connection: ClusterConnection;
  let local: ReturnType<typeof localSuperCluster> | undefined;
  try {
    if (config.SUPER_KUBECONFIG) {
      connection = connectCluster("super", { file: path.resolve(config.SUPER_KUBECONFIG) });
    } else if (config.RING0_SUPER_CLUSTER === "in-cluster") {
      // Ring0 in a pod of the super cluster: its service account, with the chart's RBAC.
      connection = connectCluster("super", { inCluster: true });
    } else if (config.RING0_SUPER_CLUSTER === "local") {
      local = localSuperCluster({ stateDir: config.stateDir, logger: log });
      const started = await local.up({
        nodes: config.RING0_SUPER_CLUSTER_NODES,
        realNodes: realNodesWanted(config.RING0_REAL_NODES, log),
      });
      log.info(started.created ? "local super cluster started" : "local super cluster reused", {
        kubeconfig: started.kubeconfig,
        server: started.server,
      });
      connection = connectCluster("super", { file: started.kubeconfig });
    } else {
      log.warn("super cluster disabled (RING0_SUPER_CLUSTER=off and no SUPER_KUBECONFIG)");
      setSuperCluster(null);
      return { connection: null, stop: () => {} };
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    setSuperClusterProblem(message);
    setSuperCluster(null);
    log.error(`Super cluster unavailable: ${message}`);
    return { connection: null, stop: () => {} };
  }
  setSuperCluster(connection);
  const health = await clusterHealth(connection);
  if (!health.ok) {
    const message = `${connection.server} is not ready: ${health.detail}`;
    setSuperClusterProblem(message);
    log.error(`Super cluster unavailable: ${message}`);
    return { connection, stop: () => {} };
  }
  try {
    await installCrds(connection, log);
  } catch (error) {
    log.error("installing Ring0's CRDs failed", { error });
  }
  // kwok's logs/exec for the pods Ring0 labels for it, scoped per pod (local cluster only).
  const binder = local ? startSimulatedPodLogs(connection, { stateDir: config.stateDir, logger: log }) : null;
  const watchdog = local ? superClusterWatchdog(local, log) : null;
  // Operators read kwok's log per node (it is every local node's kubelet).
  if (local) {
    registerNodeLogProvider("kwok", kwokLogProvider(localClusterLogFile(config.stateDir, "kwok-controller")));
    registerNodeLogProvider("kubelet", realNodeLogProvider(config.stateDir, "kubelet"));
    registerNodeLogProvider("containerd", realNodeLogProvider(config.stateDir, "containerd"));
  }
  return {
    connection,
    stop: () => {
      void watchdog?.stop();
      binder?.stop();
      registerNodeLogProvider("kwok", null);
      registerNodeLogProvider("kubelet", null);
      registerNodeLogProvider("containerd", null);
    },
  };
}

/**
 * The local super cluster's watchdog: every second, whatever of it exited (an etcd, API server,
 * scheduler, controller manager or kwok of kwokctl's; a real node's containerd or kubelet,
 * kube-proxy, kube-router, the image registry) is started again beside what runs. While that
 * lasts, /api/ready names it.
 */
export function superClusterWatchdog(
  cluster: ReturnType<typeof localSuperCluster>,
  log: Logger,
  intervalMs = 1_000,
): { stop(): Promise<void> } {
  const round = async () => {
    const down = await cluster.faults();
    if (down.length === 0) return;
    const started = performance.now();
    setSuperClusterHealing(
      `${down.join(", ")} of the local super cluster exited; Ring0 is starting it again`,
    );
    log.error("the local super cluster lost a part; healing it", { down });
    try {
      await cluster.heal();
      setSuperClusterHealing(null);
      log.info("the local super cluster is whole again", {
        restarted: down,
        ms: Math.round(performance.now() - started),
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      setSuperClusterHealing(
        `${down.join(", ")} of the local super cluster could not be started again: ${message}`,
      );
      log.error("healing the local super cluster failed; trying again", { down, error: message });
    }
  };
  return runPeriodically(intervalMs, round, (error) =>
    log.warn("super cluster watchdog round failed", { error }),
  );
}
