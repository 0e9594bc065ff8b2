/**
 * The operator's syncer procedures: health is a pure projection of the registered syncer's
 * stats() (so a stand-in object is enough there), tenants on a node reads real pods of the run's
 * super cluster, labelled as the syncer labels them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localNodeName } from "@/server/cluster/nodes";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb, setDatabaseUrl } from "@/server/db/client";
import { createObject } from "@/server/k8s/apply";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { eventually, testNamespace, testSuperCluster } from "@/server/k8s/test-cluster";
import { syncLabels } from "@/server/syncer/contracts";
import { notRunning } from "@/server/syncer/health";
import { setSyncer } from "@/server/syncer/registry";
import type { SyncerStats } from "@/server/syncer/syncer";
import { testDatabaseUrl } from "@/test/integration/database";
import { type DemoKey, seedDemoUsers, testCaller, trpcOutcome } from "@/test/integration/trpc";

const runId = Date.now().toString(36);
let conn: ClusterConnection;
let users: Record<DemoKey, SessionUser>;
let namespace: string;
let removeNamespace: () => Promise<void>;

const caller = (user: SessionUser) => testCaller(user, getDb(), `req-${runId}`);

const stats: SyncerStats = {
  queue: {
    acme: { depth: 3, oldestAgeMs: 1_500, served: 30, weight: 2, paused: false },
    globex: { depth: 0, oldestAgeMs: 0, served: 10, weight: 1, paused: true },
  },
  patrol: { acme: { pod: { checked: 5, mismatched: 1, repaired: 1 } } },
  tenants: { acme: { state: "syncing", vNodes: 1 }, globex: { state: "unreachable", vNodes: 0 } },
  patrols: 4,
};

beforeAll(async () => {
  setDatabaseUrl(await testDatabaseUrl());
  users = await seedDemoUsers(getDb());
  conn = testSuperCluster();
  setSuperCluster(conn);
  [namespace, removeNamespace] = await testNamespace(conn, "syh");
}, 60_000);

afterAll(async () => {
  setSyncer(null);
  await removeNamespace?.().catch(() => undefined);
  setSuperCluster(null);
  await disconnectDb();
}, 60_000);

describe("syncer.health", () => {
  it("says the syncer is not running on this replica when none is registered", async () => {
    setSyncer(null);
    expect(await caller(users.operator).syncer.health()).toEqual({ running: false, message: notRunning });
  });

  it("projects the running syncer's stats per tenant, with each tenant's share of work served", async () => {
    setSyncer({ stats: () => stats });
    expect(await caller(users.operator).syncer.health()).toEqual({
      running: true,
      patrols: 4,
      tenants: [
        {
          tenant: "acme",
          depth: 3,
          oldestAgeMs: 1_500,
          served: 30,
          share: 0.75,
          weight: 2,
          paused: false,
          state: "syncing",
          vNodes: 1,
          patrol: { pod: { checked: 5, mismatched: 1, repaired: 1 } },
        },
        {
          tenant: "globex",
          depth: 0,
          oldestAgeMs: 0,
          served: 10,
          share: 0.25,
          weight: 1,
          paused: true,
          state: "unreachable",
          vNodes: 0,
          patrol: {},
        },
      ],
    });
    const feed = await caller(users.operator).syncer.watchHealth();
    const iterator = feed[Symbol.asyncIterator]();
    try {
      expect((await iterator.next()).value).toMatchObject({ running: true, patrols: 4 });
    } finally {
      await iterator.return?.();
    }
  });

  it("refuses everyone but operators", async () => {
    setSyncer({ stats: () => stats });
    for (const user of [users.acmeAdmin, users.acmeMember, users.globexAdmin]) {
      expect((await trpcOutcome(caller(user).syncer.health()))[0]).toBe("FORBIDDEN");
      expect((await trpcOutcome(caller(user).syncer.tenantsOnNode({ name: localNodeName(0) })))[0]).toBe(
        "FORBIDDEN",
      );
    }
    expect((await trpcOutcome(testCaller(null).syncer.health()))[0]).toBe("UNAUTHORIZED");
  });
});

describe("syncer.tenantsOnNode", () => {
  it("counts the synced pods per tenant bound to the node", async () => {
    const node = localNodeName(0);
    const tenantA = `tna-${runId}`;
    const tenantB = `tnb-${runId}`;
    const pod = (name: string, tenant: string | null, nodeName: string) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name,
        namespace,
        labels: (tenant ? { [syncLabels.tenant]: tenant } : {}) as Record<string, string>,
      },
      spec: { nodeName, containers: [{ name: "app", image: "registry.invalid/app:1" }] },
    });
    await createObject(conn, pod("a-1", tenantA, node));
    await createObject(conn, pod("a-2", tenantA, node));
    await createObject(conn, pod("b-1", tenantB, node));
    await createObject(conn, pod("plain", null, node));
    await createObject(conn, pod("a-elsewhere", tenantA, localNodeName(1)));

    const operator = caller(users.operator);
    const ours = await eventually(async () => {
      const tenants = (await operator.syncer.tenantsOnNode({ name: node })).filter((row) =>
        row.tenant.endsWith(runId),
      );
      return tenants.length === 2 && tenants[0]?.pods === 2 ? tenants : undefined;
    });
    expect(ours).toEqual([
      { tenant: tenantA, pods: 2 },
      { tenant: tenantB, pods: 1 },
    ]);
    expect(
      (await operator.syncer.tenantsOnNode({ name: localNodeName(1) })).find((row) => row.tenant === tenantA),
    ).toEqual({ tenant: tenantA, pods: 1 });
  });

  it("validates the node name, naming the field", async () => {
    const [code, message] = await trpcOutcome(
      caller(users.operator).syncer.tenantsOnNode({ name: "Bad_Node" }),
    );
    expect(code).toBe("BAD_REQUEST");
    expect(message).toContain("name: expected a node name");
  });
});
