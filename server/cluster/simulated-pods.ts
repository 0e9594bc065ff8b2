/**
 * The simulated pods of the local super cluster: pods on kwok's nodes run no process, so Ring0 gives
 * each one it labels `ring0.dev/kwok-exec: "true"` (the label's name is older than this module) a log
 * file that ring0-simkubelet serves for `kubectl logs` (<stateDir>/sim-logs/<namespace>/<pod>.log,
 * CRI format). Exec needs nothing per pod: ring0-simkubelet runs every command in a sandbox of its
 * own (tools/kube/kwok/simkubelet), never as a plain process on this host. Files go with their pods.
 */
import fs from "node:fs";
import path from "node:path";
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { V1Pod } from "@/server/k8s/kinds/node";
import { PodKind } from "@/server/k8s/kinds/pod";
import { listAndWatch } from "@/server/k8s/watch";
import type { Logger } from "@/server/logger";
import { simulatedPodLogsDir } from "./local";

/** Pods Ring0 keeps a simulated log for (the syncer labels tenant pods in the local world). */
export const SIMULATED_POD_LABEL = "ring0.dev/kwok-exec";

/** A DNS-1123 name, as the API server allows: never a path that leaves the logs directory. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** The log file of a simulated pod; throws for a name the API server would not have accepted. */
export function simulatedPodLogFile(stateDir: string, namespace: string, pod: string): string {
  if (!OBJECT_NAME.test(namespace) || !OBJECT_NAME.test(pod)) {
    throw new Error(`"${namespace}/${pod}" is not a pod name`);
  }
  return path.join(simulatedPodLogsDir(stateDir), namespace, `${pod}.log`);
}

/** The first lines of a simulated pod's log, in the CRI format: "<RFC3339Nano> <stream> <F|P> <message>". */
export function simulatedPodLogStart(pod: V1Pod, now: Date): string {
  const stamp = now.toISOString();
  const containers = (pod.spec?.containers ?? []).map((container) => container.name).join(", ") || "(none)";
  return (
    `${stamp} stdout F ring0: simulated pod ${pod.metadata?.namespace}/${pod.metadata?.name} started on ${pod.spec?.nodeName ?? "?"}\n` +
    `${stamp} stdout F ring0: containers: ${containers}\n`
  );
}

/**
 * Keep log files in step with labelled pods until stop(). Runs wherever the local super cluster is
 * used (Ring0's runtime, tests); a pod's log exists once the scheduler has placed it.
 */
export function startSimulatedPodLogs(
  conn: ClusterConnection,
  options: { stateDir: string; logger: Logger },
): { stop(): void; written(): Set<string> } {
  const log = options.logger.child({ component: "simulated-pod-logs" });
  const written = new Set<string>();

  const write = (pod: V1Pod) => {
    const namespace = pod.metadata?.namespace ?? "default";
    const name = pod.metadata?.name ?? "";
    const key = `${namespace}/${name}/${pod.metadata?.uid ?? ""}`;
    if (written.has(key) || pod.metadata?.deletionTimestamp) return;
    // Not before the scheduler has placed it: the first line names its node. Its binding is a
    // MODIFIED event: written then.
    if (!pod.spec?.nodeName) return;
    try {
      const file = simulatedPodLogFile(options.stateDir, namespace, name);
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      if (!fs.existsSync(file))
        fs.writeFileSync(file, simulatedPodLogStart(pod, new Date()), { mode: 0o600 });
      written.add(key);
    } catch (error) {
      log.warn("could not write a simulated pod's log", { pod: `${namespace}/${name}`, error });
    }
  };

  /**
   * Log files of pods that went while nobody watched (Ring0 was down) are removed, so a new pod of
   * the same name starts afresh. Files touched in the last minute are left: another process's
   * watch may have written one for a pod this list has not seen yet.
   */
  const forgetGone = (pods: V1Pod[]) => {
    const root = simulatedPodLogsDir(options.stateDir);
    const keep = new Set(pods.map((pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}.log`));
    const before = Date.now() - 60_000;
    let namespaces: string[] = [];
    try {
      namespaces = fs.readdirSync(root);
    } catch {
      return;
    }
    for (const namespace of namespaces) {
      let files: string[] = [];
      try {
        files = fs.readdirSync(path.join(root, namespace));
      } catch {
        continue;
      }
      for (const file of files) {
        const full = path.join(root, namespace, file);
        try {
          if (!keep.has(`${namespace}/${file}`) && fs.statSync(full).mtimeMs < before)
            fs.rmSync(full, { force: true });
        } catch {
          // gone meanwhile
        }
      }
    }
  };

  const watch = listAndWatch<V1Pod>(
    conn,
    { path: PodKind.path(), labelSelector: `${SIMULATED_POD_LABEL}=true` },
    {
      onSync: (pods) => {
        forgetGone(pods);
        for (const pod of pods) write(pod);
      },
      onEvent: (type, pod) => {
        if (type === "DELETED") {
          const namespace = pod.metadata?.namespace ?? "default";
          written.delete(`${namespace}/${pod.metadata?.name}/${pod.metadata?.uid ?? ""}`);
          try {
            fs.rmSync(simulatedPodLogFile(options.stateDir, namespace, pod.metadata?.name ?? ""), {
              force: true,
            });
          } catch {
            // not a pod name: nothing was written for it
          }
          return;
        }
        write(pod);
      },
      onError: (error) => log.debug("pod watch error", { error: error.message }),
    },
  );
  return { stop: () => watch.stop(), written: () => written };
}
