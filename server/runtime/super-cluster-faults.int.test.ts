/**
 * The local super cluster's watchdog on a super cluster of this suite's own (the run's shared one
 * serves other suites and must never lose a component): its components killed with SIGKILL are
 * started again by the watchdog alone, /api/ready's slot names them meanwhile, and nothing stored
 * is lost.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSuperCluster, localSuperCluster } from "@/server/cluster/local";
import { kwokctlComponentStates } from "@/server/cluster/process";
import { createObject, type KubeObject, readObject } from "@/server/k8s/apply";
import { type ClusterConnection, clusterHealth } from "@/server/k8s/cluster";
import { superClusterHealing } from "@/server/k8s/super-cluster-state";
import { eventually } from "@/server/k8s/test-cluster";
import { createLogger } from "@/server/logger";
import { removeLocalWorld } from "./local-world";
import { superClusterWatchdog } from "./super-cluster";

const logger = createLogger({ service: "super-cluster-faults-it" }, "error");
let stateDir: string;
let cluster: LocalSuperCluster;
let conn: ClusterConnection;
let watchdog: { stop(): Promise<void> };
const clusterDir = () => path.join(stateDir, "kwok", "clusters", "ring0");
const pidOf = (component: string) =>
  Number(fs.readFileSync(path.join(clusterDir(), "pids", `${component}.pid`), "utf8").trim());

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-super-faults-"));
  cluster = localSuperCluster({ stateDir, logger });
  await cluster.up({ nodes: 1 });
  conn = cluster.connect();
  watchdog = superClusterWatchdog(cluster, logger, 500);
}, 240_000);

afterAll(async () => {
  await watchdog?.stop();
  await removeLocalWorld(stateDir, logger).catch(() => cluster?.down());
  fs.rmSync(stateDir, { recursive: true, force: true });
}, 120_000);

describe("the local super cluster's watchdog", () => {
  it.each([["kube-apiserver", "kube-scheduler"], ["etcd"], ["kube-controller-manager", "kwok-controller"]])(
    "starts %s again (with the others of the row) after SIGKILL, and keeps what was stored",
    async (...killed) => {
      const name = `kept-${killed[0]}`;
      await createObject(conn, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: "default" },
        data: { before: "the fault" },
      });
      const pids = killed.map(pidOf);
      const seen: string[] = [];
      for (const pid of pids) process.kill(pid, "SIGKILL");
      // Named while it heals…
      await eventually(() => {
        const healing = superClusterHealing();
        if (healing) seen.push(healing);
        return healing ? true : undefined;
      }, 10_000);
      // …then whole again.
      await eventually(async () => {
        if (superClusterHealing()) return undefined;
        return (await clusterHealth(conn, { timeoutMs: 2_000 })).ok ? true : undefined;
      }, 120_000);
      for (const component of killed) expect(seen[0]).toContain(component);
      expect(seen[0]).toMatch(/of the local super cluster exited; Ring0 is starting it again$/);
      const states = kwokctlComponentStates(clusterDir(), [
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kwok-controller",
      ] as const);
      expect(Object.values(states).every((state) => state === "running")).toBe(true);
      killed.forEach((component, index) => {
        expect(pidOf(component)).not.toBe(pids[index]);
      });
      expect(await cluster.faults()).toEqual([]);
      const kept = await readObject<KubeObject & { data?: Record<string, string> }>(conn, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: "default" },
      });
      expect(kept.data).toEqual({ before: "the fault" });
    },
    180_000,
  );
});
