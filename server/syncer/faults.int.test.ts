/**
 * Faults (issue 5): the super cluster's kube-apiserver killed (SIGKILL) while the syncer is busy
 * copying a batch of tenant objects down, tenant objects created and deleted while it is down, and
 * the same apiserver process started again. The syncer must converge: every tenant pod exactly once
 * below, nothing orphaned, statuses back up, the syncer still running.
 *
 * This suite runs its OWN local super cluster in a temporary state dir (the run's shared one serves
 * other suites and must never lose its apiserver), plus one tenant control plane there.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSuperCluster, localSuperCluster } from "@/server/cluster/local";
import { hasExited, killProcessesMentioning, waitExited } from "@/server/cluster/process";
import { createObject, deleteObject, type KubeObject } from "@/server/k8s/apply";
import { type ClusterConnection, clusterHealth } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { createLocalProvisioner } from "@/server/provisioners/local";
import type { Provisioner } from "@/server/provisioners/types";
import { removeLocalWorld } from "@/server/runtime/local-world";
import { syncAnnotations, syncLabels } from "./contracts";
import { superNamespace } from "./naming";
import { createSyncer, type Syncer } from "./syncer";
import { type Obj, provisionerDirectory, ref, startTenants } from "./test-world";

const logger = createLogger({ service: "syncer-faults-it" }, "error");
const tenant = `fl-${Date.now().toString(36).slice(-5)}`;
const namespace = "batch";
const batch = 30;

let stateDir = "";
let cluster: LocalSuperCluster | undefined;
let superCluster: ClusterConnection;
let provisioner: Provisioner | undefined;
let conn: ClusterConnection;
let syncer: Syncer | undefined;
/** Processes this suite started (restarted components), stopped however the suite ends. */
const restarted: number[] = [];

const pod = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace, labels: { app: "batch" } },
  spec: { containers: [{ name: "main", image: "nginx" }], terminationGracePeriodSeconds: 0 },
});
const configMap = (name: string, value: string): KubeObject => ({
  ...ref("ConfigMap", name, namespace),
  data: { value },
});

async function list(target: ClusterConnection, apiPath: string, labelSelector?: string): Promise<Obj[]> {
  const result = await kubeRequest<{ items: Obj[] }>(target, {
    path: apiPath,
    query: labelSelector ? { labelSelector } : {},
    timeoutMs: 15_000,
  });
  return result.items;
}

const canonical = (record: Record<string, unknown>) => JSON.stringify(Object.entries(record).sort());

/** A process of the super cluster as it runs now: what it takes to start it again. */
interface ComponentProcess {
  /** kwokctl's component name (its pid file's), e.g. kube-apiserver. */
  component: string;
  pid: number;
  executable: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

const clusterDir = () => path.join(stateDir, "kwok", "clusters", cluster?.name ?? "");

/** Every component kwokctl started for the super cluster, by its pid files. */
function superComponents(): Map<string, ComponentProcess> {
  const components = new Map<string, ComponentProcess>();
  const pidsDir = path.join(clusterDir(), "pids");
  for (const file of fs.readdirSync(pidsDir)) {
    if (!file.endsWith(".pid")) continue;
    const component = file.slice(0, -".pid".length);
    const pid = Number(fs.readFileSync(path.join(pidsDir, file), "utf8").trim());
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, -1);
    const env = Object.fromEntries(
      fs
        .readFileSync(`/proc/${pid}/environ`, "utf8")
        .split("\0")
        .filter(Boolean)
        .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
    );
    components.set(component, {
      component,
      pid,
      executable: fs.readlinkSync(`/proc/${pid}/exe`),
      args: argv.slice(1),
      cwd: fs.readlinkSync(`/proc/${pid}/cwd`),
      env,
    });
  }
  return components;
}

/**
 * Start a component again as kwokctl did (same binary, flags, environment, log and pid file), as
 * a node's kubelet restarts a static pod; kwokctl's delete then stops it by its pid file.
 */
function restartComponent(previous: ComponentProcess): number {
  const logFile = fs.openSync(path.join(clusterDir(), "logs", `${previous.component}.log`), "a");
  const child = spawn(previous.executable, previous.args, {
    cwd: previous.cwd,
    env: previous.env as NodeJS.ProcessEnv,
    stdio: ["ignore", logFile, logFile],
    detached: true,
  });
  fs.closeSync(logFile);
  child.unref();
  if (!child.pid) throw new Error(`restarting ${previous.component} failed`);
  fs.writeFileSync(path.join(clusterDir(), "pids", `${previous.component}.pid`), String(child.pid));
  restarted.push(child.pid);
  return child.pid;
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-syncer-faults-"));
  cluster = localSuperCluster({ stateDir, logger });
  await cluster.up({ nodes: 2 });
  superCluster = cluster.connect();
  await installCrds(superCluster, logger);
  provisioner = createLocalProvisioner({ stateDir, logger });
  [conn] = (await startTenants(superCluster, provisioner, [tenant])) as [ClusterConnection];
  await createObject(conn, ref("Namespace", namespace));
  // Pods need the namespace's default service account, from the tenant's controller manager.
  await eventually(
    () => kubeRequest(conn, { path: `/api/v1/namespaces/${namespace}/serviceaccounts/default` }),
    60_000,
  );
  syncer = createSyncer({
    superCluster,
    directory: provisionerDirectory(new Set([tenant]), () => provisioner),
    logger,
    workers: 4,
    patrolIntervalMs: 5_000,
    heartbeatIntervalMs: 5_000,
    tenantRecheckMs: 1_000,
  });
  await syncer.start();
}, 400_000);

afterAll(async () => {
  try {
    await syncer?.stop();
  } finally {
    try {
      if (stateDir) await removeLocalWorld(stateDir, logger);
    } finally {
      // Whatever outlived kwokctl (the apiserver started here, should the delete have missed it).
      const alive = restarted.filter((pid) => !hasExited(pid));
      for (const pid of alive) process.kill(pid, "SIGKILL");
      await waitExited(alive);
      if (stateDir) {
        await killProcessesMentioning(stateDir);
        fs.rmSync(stateDir, { recursive: true, force: true });
      }
    }
  }
}, 300_000);

describe("the syncer when the super apiserver dies mid-sync", { timeout: 400_000 }, () => {
  it("converges without duplicate or orphaned objects once it is back", async () => {
    const names = Array.from({ length: batch }, (_, index) => `p${index}`);
    await Promise.all(names.map((name) => createObject(conn, configMap(`c-${name}`, "one"))));
    await Promise.all(names.map((name) => createObject(conn, pod(name))));

    // Mid-sync: some copies are below already, the rest still being written.
    await eventually(async () => {
      const below = await list(superCluster, "/api/v1/pods", `${syncLabels.tenant}=${tenant}`);
      return below.length >= 3;
    }, 120_000);
    const components = superComponents();
    const apiserver = components.get("kube-apiserver");
    if (!apiserver) throw new Error("the super cluster runs no kube-apiserver");
    process.kill(apiserver.pid, "SIGKILL");
    await waitExited([apiserver.pid], 30_000);
    expect((await clusterHealth(superCluster, { timeoutMs: 2_000 })).ok).toBe(false);

    // While it is down: new pods, deleted pods, a changed and a deleted config map.
    const added = ["q0", "q1", "q2", "q3", "q4"];
    const deleted = names.slice(0, 8);
    await Promise.all(added.map((name) => createObject(conn, pod(name))));
    await Promise.all(deleted.map((name) => deleteObject(conn, ref("Pod", name, namespace))));
    await kubeRequest(conn, {
      method: "PATCH",
      path: `/api/v1/namespaces/${namespace}/configmaps/c-p10`,
      contentType: "application/merge-patch+json",
      body: { data: { value: "two" } },
    });
    await deleteObject(conn, ref("ConfigMap", "c-p11", namespace));
    // Let the syncer's writes and watches fail against the dead apiserver for a while.
    await new Promise((resolve) => setTimeout(resolve, 5_000));

    restartComponent(apiserver);
    await eventually(async () => (await clusterHealth(superCluster, { timeoutMs: 3_000 })).ok, 120_000);
    // The scheduler and controller manager exit when they lose their leader lease meanwhile; a
    // node's kubelet would restart them, as this does.
    for (const component of components.values()) {
      if (component !== apiserver && hasExited(component.pid)) restartComponent(component);
    }

    const expected = names.filter((name) => !deleted.includes(name)).concat(added);
    // Graceful deletions in the tenant finish (the syncer completes them, as a kubelet would).
    await eventually(async () => {
      const above = await list(conn, `/api/v1/namespaces/${namespace}/pods`);
      return above.length === expected.length;
    }, 180_000);
    const superNs = superNamespace(tenant, namespace);
    const sides = async () => {
      const [above, below] = await Promise.all([
        list(conn, `/api/v1/namespaces/${namespace}/pods`),
        list(superCluster, "/api/v1/pods", `${syncLabels.tenant}=${tenant}`),
      ]);
      return { above, below };
    };
    const summary = ({ above, below }: { above: Obj[]; below: Obj[] }) => ({
      above: above
        .map(
          (item) =>
            `${item.metadata.name} ${item.status?.phase} ${item.spec?.nodeName ?? "-"} ${item.status?.podIP ?? "-"}${item.metadata.deletionTimestamp ? " deleting" : ""}`,
        )
        .sort(),
      below: below
        .map(
          (item) =>
            `${item.metadata.name} ${item.status?.phase} ${item.spec?.nodeName ?? "-"}${item.metadata.deletionTimestamp ? " deleting" : ""}`,
        )
        .sort(),
    });
    const isConverged = ({ above, below }: { above: Obj[]; below: Obj[] }) =>
      below.every((item) => !item.metadata.deletionTimestamp) &&
      below.length === expected.length &&
      above.every((item) => item.status?.phase === "Running" && item.spec?.nodeName && item.status?.podIP);
    await eventually(async () => isConverged(await sides()), 180_000).catch(() => undefined);
    const converged = await sides();
    expect(
      isConverged(converged),
      JSON.stringify({ ...summary(converged), stats: syncer?.stats() }, null, 1),
    ).toBe(true);

    // Every tenant pod exactly once below, by its uid; nothing else below.
    const uidsAbove = converged.above.map((item) => item.metadata.uid).sort();
    const uidsBelow = converged.below.map((item) => item.metadata.annotations?.[syncAnnotations.uid]).sort();
    expect(uidsBelow).toEqual(uidsAbove);
    expect(new Set(uidsBelow).size).toBe(uidsBelow.length);
    expect(converged.above.map((item) => item.metadata.name).sort()).toEqual([...expected].sort());
    expect(converged.below.every((item) => item.metadata.namespace === superNs)).toBe(true);
    // Statuses back up: each tenant pod bound to its copy's node, with its copy's IP.
    const belowByUid = new Map(
      converged.below.map((item) => [item.metadata.annotations?.[syncAnnotations.uid], item]),
    );
    for (const item of converged.above) {
      const copy = belowByUid.get(item.metadata.uid);
      expect(item.spec?.nodeName).toBe(copy?.spec?.nodeName);
      expect(item.status?.podIP).toBe(copy?.status?.podIP);
    }

    // Config maps: the change made while it was down below, the deleted one gone, none extra (in
    // this namespace: the tenant's kube-system config maps are synced too).
    const configMapsBelow = async () =>
      Object.fromEntries(
        (
          await list(
            superCluster,
            `/api/v1/namespaces/${superNamespace(tenant, namespace)}/configmaps`,
            `${syncLabels.tenant}=${tenant}`,
          )
        ).map((item) => [item.metadata.name, item.data?.value]),
      );
    const wanted = Object.fromEntries(
      names.filter((name) => name !== "p11").map((name) => [`c-${name}`, name === "p10" ? "two" : "one"]),
    );
    await eventually(async () => canonical(await configMapsBelow()) === canonical(wanted), 120_000).catch(
      () => undefined,
    );
    expect(await configMapsBelow(), JSON.stringify(syncer?.stats())).toEqual(wanted);

    // The syncer is still running and serving the tenant, with nothing left queued.
    await eventually(() => syncer?.stats().queue[tenant]?.depth === 0, 60_000);
    expect(syncer?.stats().tenants[tenant]?.state).toBe("syncing");
  });
});
