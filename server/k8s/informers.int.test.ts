import { describe, expect, inject, it } from "vitest";
import { localSuperCluster } from "@/server/cluster/local";
import { createLogger } from "@/server/logger";
import { deleteObject, serverSideApply } from "./apply";
import { openWatchCount, sharedInformer } from "./informers";
import { summariseNode, type V1Node } from "./kinds/node";
import { eventually, testNamespace, testSuperCluster } from "./test-cluster";

const conn = testSuperCluster();

interface ConfigMap {
  metadata: { name: string };
}

describe("shared informers against the super cluster", () => {
  it("share one watch across subscribers and stop it after the last one leaves", async () => {
    const [namespace, cleanup] = await testNamespace(conn, "informer");
    try {
      const path = `/api/v1/namespaces/${namespace}/configmaps`;
      const before = openWatchCount();
      const first = sharedInformer<ConfigMap>(conn, { path });
      const second = sharedInformer<ConfigMap>(conn, { path });
      expect(second).toBe(first);
      const seenA: string[][] = [];
      const seenB: string[][] = [];
      const offA = first.subscribe((items) => seenA.push(items.map((item) => item.metadata.name)));
      const offB = second.subscribe((items) => seenB.push(items.map((item) => item.metadata.name)));
      await first.synced();
      expect(openWatchCount()).toBe(before + 1);
      await serverSideApply(conn, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "shared", namespace },
      });
      await eventually(() => seenA.at(-1)?.includes("shared") && seenB.at(-1)?.includes("shared"));
      expect(openWatchCount()).toBe(before + 1);
      offA();
      offB();
      await eventually(() => openWatchCount() === before, 15_000);
      expect(sharedInformer<ConfigMap>(conn, { path })).not.toBe(first);
    } finally {
      await cleanup();
    }
  });

  it("sees a kwok node added to the super cluster, Ready with its zone", async () => {
    const cluster = localSuperCluster({
      stateDir: inject("superStateDir"),
      logger: createLogger({}, "warn"),
    });
    const informer = sharedInformer<V1Node>(conn, { path: "/api/v1/nodes" });
    const latest: { nodes: V1Node[] } = { nodes: [] };
    const off = informer.subscribe((nodes) => {
      latest.nodes = nodes;
    });
    let added: string[] = [];
    try {
      await informer.synced();
      added = await cluster.addNodes(1);
      const name = added[0]!;
      const summary = await eventually(() => {
        const node = latest.nodes.find((candidate) => candidate.metadata?.name === name);
        const summarised = node ? summariseNode(node, 0) : undefined;
        return summarised?.status === "Ready" ? summarised : undefined;
      }, 30_000);
      expect(summary).toMatchObject({
        roles: ["worker"],
        instanceType: "ring0.standard-16",
        capacity: { cpu: "16", memory: "64Gi", pods: "110" },
      });
      expect(summary.zone).toMatch(/^zone-[abc]$/);
      expect(summary.addresses[0]).toEqual({ type: "InternalDNS", address: "localhost" });
    } finally {
      for (const name of added)
        await deleteObject(conn, { apiVersion: "v1", kind: "Node", metadata: { name } });
      off();
    }
  });
});
