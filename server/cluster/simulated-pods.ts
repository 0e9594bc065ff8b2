/**
 * `kubectl logs` / `kubectl exec` for simulated pods of the local super cluster. kwok serves both
 * from per-pod `Logs` and `Exec` objects (kwok.x-k8s.io/v1alpha1, named like the pod). kwok's
 * ClusterExec can only select by namespace and name, so Ring0 scopes exec by label instead: this
 * binder watches pods labelled `ring0.dev/kwok-exec: "true"` and gives each one, and only those:
 *   - an Exec running commands in a dedicated work dir <stateDir>/kwok-exec/work/<namespace>/<pod>,
 *     with a minimal environment (kwok's own is already minimal: see kwokctlEnv in local.ts) and,
 *     when Ring0 runs as root, as the unprivileged user nobody (65534);
 *   - a Logs object following <stateDir>/kwok-exec/logs/<namespace>/<pod>.log.
 * Both are owned by the pod, so the garbage collector removes them with it.
 */
import fs from "node:fs";
import path from "node:path";
import { type KubeObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import type { V1Pod } from "@/server/k8s/nodes";
import { listAndWatch } from "@/server/k8s/watch";
import type { Logger } from "@/server/logger";

export const KWOK_EXEC_LABEL = "ring0.dev/kwok-exec";
const NOBODY = 65534;

export interface KwokDebugPaths {
  workDir: string;
  logsFile: string;
}

export function kwokDebugPaths(stateDir: string, namespace: string, pod: string): KwokDebugPaths {
  const root = path.join(path.resolve(stateDir), "kwok-exec");
  return {
    workDir: path.join(root, "work", namespace, pod),
    logsFile: path.join(root, "logs", namespace, `${pod}.log`),
  };
}

/** The Exec and Logs objects for one labelled pod (pure; unit-tested). */
export function kwokDebugManifests(pod: V1Pod, paths: KwokDebugPaths, runAsNobody: boolean): KubeObject[] {
  const name = pod.metadata?.name ?? "";
  const namespace = pod.metadata?.namespace ?? "default";
  const metadata = {
    name,
    namespace,
    labels: { "app.kubernetes.io/managed-by": "ring0" },
    ownerReferences: [
      { apiVersion: "v1", kind: "Pod", name, uid: pod.metadata?.uid ?? "", blockOwnerDeletion: false },
    ],
  };
  return [
    {
      apiVersion: "kwok.x-k8s.io/v1alpha1",
      kind: "Exec",
      metadata,
      spec: {
        execs: [
          {
            local: {
              workDir: paths.workDir,
              envs: [
                { name: "PATH", value: "/usr/local/bin:/usr/bin:/bin" },
                { name: "HOME", value: paths.workDir },
                { name: "TERM", value: "xterm-256color" },
                { name: "HOSTNAME", value: name },
                { name: "POD_NAME", value: name },
                { name: "POD_NAMESPACE", value: namespace },
              ],
              ...(runAsNobody ? { securityContext: { runAsUser: NOBODY, runAsGroup: NOBODY } } : {}),
            },
          },
        ],
      },
    },
    {
      apiVersion: "kwok.x-k8s.io/v1alpha1",
      kind: "Logs",
      metadata,
      spec: { logs: [{ logsFile: paths.logsFile, follow: true }] },
    },
  ];
}

/** Whether the unprivileged user could reach `dir`: every ancestor must be world-searchable. */
function reachableByOthers(dir: string): boolean {
  for (let current = path.dirname(dir); ; current = path.dirname(current)) {
    try {
      if ((fs.statSync(current).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    if (current === path.dirname(current)) return true;
  }
}

function prepareFiles(pod: V1Pod, paths: KwokDebugPaths, runAsNobody: boolean): void {
  fs.mkdirSync(paths.workDir, { recursive: true, mode: 0o755 });
  fs.mkdirSync(path.dirname(paths.logsFile), { recursive: true });
  if (runAsNobody) fs.chownSync(paths.workDir, NOBODY, NOBODY);
  if (!fs.existsSync(paths.logsFile)) {
    const now = new Date().toISOString();
    const containers = (pod.spec?.containers ?? []).map((container) => container.name).join(", ") || "(none)";
    // kwok reads CRI's log format: "<RFC3339Nano> <stream> <F|P> <message>".
    fs.writeFileSync(
      paths.logsFile,
      `${now} stdout F ring0: simulated pod ${pod.metadata?.namespace}/${pod.metadata?.name} started on ${pod.spec?.nodeName ?? "?"}\n` +
        `${now} stdout F ring0: containers: ${containers}\n`,
    );
  }
}

/**
 * Keep Exec/Logs objects in step with labelled pods until stop(). Runs wherever the local super
 * cluster is used (Ring0's runtime, tests); a pod is served by kwok once its objects exist.
 */
export function startKwokDebugBinder(
  conn: ClusterConnection,
  options: { stateDir: string; logger: Logger },
): { stop(): void; bound(): Set<string> } {
  const log = options.logger.child({ component: "kwok-debug-binder" });
  const runningAsRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const bound = new Set<string>();

  const bind = async (pod: V1Pod) => {
    const namespace = pod.metadata?.namespace ?? "default";
    const name = pod.metadata?.name ?? "";
    const key = `${namespace}/${name}/${pod.metadata?.uid ?? ""}`;
    if (bound.has(key) || pod.metadata?.deletionTimestamp) return;
    // Not before the scheduler has placed it: the log file's first line names its node, and kwok
    // serves nothing for an unscheduled pod anyway. Its binding is a MODIFIED event: bound then.
    if (!pod.spec?.nodeName) return;
    const paths = kwokDebugPaths(options.stateDir, namespace, name);
    try {
      fs.mkdirSync(paths.workDir, { recursive: true, mode: 0o755 });
      // Drop to nobody when Ring0 runs as root and nobody can reach the work dir.
      const asNobody = runningAsRoot && reachableByOthers(paths.workDir);
      prepareFiles(pod, paths, asNobody);
      for (const manifest of kwokDebugManifests(pod, paths, asNobody)) {
        await serverSideApply(conn, manifest, { force: true });
      }
      bound.add(key);
    } catch (error) {
      if (isNotFound(error)) return; // the pod went away meanwhile
      log.warn("could not enable kwok logs/exec for pod", { pod: `${namespace}/${name}`, error });
    }
  };

  const watch = listAndWatch<V1Pod>(
    conn,
    { path: "/api/v1/pods", labelSelector: `${KWOK_EXEC_LABEL}=true` },
    {
      onSync: (pods) => {
        for (const pod of pods) void bind(pod);
      },
      onEvent: (type, pod) => {
        if (type === "DELETED") {
          const namespace = pod.metadata?.namespace ?? "default";
          bound.delete(`${namespace}/${pod.metadata?.name}/${pod.metadata?.uid ?? ""}`);
          const paths = kwokDebugPaths(options.stateDir, namespace, pod.metadata?.name ?? "");
          fs.rmSync(paths.workDir, { recursive: true, force: true });
          fs.rmSync(paths.logsFile, { force: true });
          return;
        }
        void bind(pod);
      },
      onError: (error) => log.debug("pod watch error", { error: error.message }),
    },
  );
  return { stop: () => watch.stop(), bound: () => bound };
}
