/**
 * The quotas.usage router through createCaller against the real database and the local super
 * cluster: who may read what, refusals paged newest first, history bounded, and a tenant's limits
 * read from its Tenant object as the webhook reads them.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { createPrismaClient, type PrismaClient } from "@/server/db/client";
import { deleteObject, serverSideApply } from "@/server/k8s/apply";
import { setSuperCluster } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { testSuperCluster } from "@/server/k8s/test-cluster";
import { createLogger } from "@/server/logger";
import { MAX_HISTORY_POINTS } from "@/server/quotas/usage-history";
import { tenantRef } from "@/server/tenants/tenant-resources";
import { testDatabaseUrl } from "@/test/integration/database";
import { type DemoKey, seedDemoUsers, testCaller, trpcCode } from "@/test/integration/trpc";

let db: PrismaClient;
let users: Record<DemoKey, SessionUser>;
const quotaTenant = `qu-${randomBytes(3).toString("hex")}`;
const superCluster = testSuperCluster();

beforeAll(async () => {
  db = createPrismaClient(await testDatabaseUrl());
  users = await seedDemoUsers(db);
  setSuperCluster(superCluster);
  await installCrds(superCluster, createLogger({}, "error"));
  await db.quotaRefusal.deleteMany({ where: { tenant: { in: ["acme", quotaTenant] } } });
  await db.quotaSample.deleteMany({ where: { tenant: { in: ["acme", quotaTenant] } } });
  await serverSideApply(superCluster, {
    ...tenantRef(quotaTenant),
    metadata: { name: quotaTenant },
    spec: { displayName: "Quota test", quota: { hard: { "requests.cpu": "2", pods: "10", memory: "4Gi" } } },
  });
});

afterAll(async () => {
  await deleteObject(superCluster, tenantRef(quotaTenant)).catch(() => undefined);
  setSuperCluster(null);
  await db.quotaRefusal.deleteMany({ where: { tenant: { in: ["acme", quotaTenant] } } });
  await db.quotaSample.deleteMany({ where: { tenant: { in: ["acme", quotaTenant] } } });
  await db.$disconnect();
});

const callerFor = (user: SessionUser) => testCaller(user, db);

describe("quotas.usage access", () => {
  it("lets members and operators read a tenant, hides it from others, keeps the overview for operators", async () => {
    expect(await trpcCode(callerFor(users.acmeMember!).quotas.usage.refusals({ tenant: "acme" }))).toBe("OK");
    expect(await trpcCode(callerFor(users.operator!).quotas.usage.refusals({ tenant: "acme" }))).toBe("OK");
    expect(await trpcCode(callerFor(users.globexAdmin!).quotas.usage.refusals({ tenant: "acme" }))).toBe(
      "NOT_FOUND",
    );
    expect(
      await trpcCode(
        callerFor(users.globexAdmin!).quotas.usage.history({ tenant: "acme", resource: "pods" }),
      ),
    ).toBe("NOT_FOUND");
    expect(await trpcCode(callerFor(users.acmeAdmin!).quotas.usage.overview())).toBe("FORBIDDEN");
    expect(
      await trpcCode(
        callerFor(users.acmeAdmin!).quotas.usage.history({
          tenant: "acme",
          resource: "count/pods" as "pods",
        }),
      ),
    ).toBe("BAD_REQUEST");
  });
});

describe("refusals", () => {
  it("pages newest first with the exceeded limits as quantities", async () => {
    const base = Date.UTC(2026, 0, 1);
    for (let index = 0; index < 5; index++) {
      await db.quotaRefusal.create({
        data: {
          tenant: "acme",
          firstAt: new Date(base + index * 1000),
          lastAt: new Date(base + index * 1000),
          count: index + 1,
          user: "acme:acme-admin",
          operation: "CREATE",
          kind: "Pod",
          namespace: "team-a",
          name: `pod-${index}`,
          exceeded: [{ resource: "requests.cpu", requested: "500m", used: "1800m", limit: "2" }],
          message: `exceeded tenant quota of "acme": requests.cpu: requested 500m, used 1800m, limited 2`,
        },
      });
    }
    const caller = callerFor(users.acmeMember!);
    const first = await caller.quotas.usage.refusals({ tenant: "acme", limit: 2 });
    expect(first.items.map((item) => item.name)).toEqual(["pod-4", "pod-3"]);
    expect(first.items[0]).toMatchObject({
      count: 5,
      exceeded: [{ resource: "requests.cpu", requested: "500m", used: "1800m", limit: "2" }],
    });
    const second = await caller.quotas.usage.refusals({
      tenant: "acme",
      limit: 2,
      cursor: first.nextCursor!,
    });
    const third = await caller.quotas.usage.refusals({
      tenant: "acme",
      limit: 2,
      cursor: second.nextCursor!,
    });
    expect([...second.items, ...third.items].map((item) => item.name)).toEqual(["pod-2", "pod-1", "pod-0"]);
    expect(third.nextCursor).toBeNull();
    // Another tenant's refusals are not acme's.
    expect((await callerFor(users.operator!).quotas.usage.refusals({ tenant: quotaTenant })).items).toEqual(
      [],
    );
  });
});

describe("history", () => {
  it("reads one resource from the samples, bounded to the maximum number of points", async () => {
    const now = Date.now();
    const count = 1500;
    await db.quotaSample.createMany({
      data: Array.from({ length: count }, (_, index) => ({
        tenant: "acme",
        at: new Date(now - (count - index) * 30_000),
        used: { "requests.cpu": `${index % 10}00m`, pods: "3" },
        hard: index < 1000 ? { "requests.cpu": "2" } : { "requests.cpu": "4" },
      })),
    });
    const history = await callerFor(users.acmeAdmin!).quotas.usage.history({
      tenant: "acme",
      resource: "requests.cpu",
      sinceHours: 24,
    });
    expect(history.samples).toBe(count);
    expect(history.points.length).toBeLessThanOrEqual(MAX_HISTORY_POINTS);
    expect(history.points.length).toBeGreaterThan(MAX_HISTORY_POINTS / 2);
    expect(Math.max(...history.points.map((point) => point.used))).toBe(0.9);
    expect(history.points[0]!.limit).toBe(2);
    expect(history.points.at(-1)!.limit).toBe(4);
    expect(history).toMatchObject({ label: "CPU requests", kind: "cpu" });

    const lastHour = await callerFor(users.acmeAdmin!).quotas.usage.history({
      tenant: "acme",
      resource: "pods",
      sinceHours: 1,
    });
    // Samples every 30 s; the one exactly an hour old may fall just outside by the time the query runs.
    expect([119, 120]).toContain(lastHour.samples);
    expect(lastHour.points.every((point) => point.used === 3 && point.limit === null)).toBe(true);
  });
});

describe("tenant", () => {
  it("reads the limits from the Tenant object and, without a serving control plane, usage from the newest sample", async () => {
    await db.quotaSample.create({
      data: {
        tenant: quotaTenant,
        at: new Date(),
        used: { "requests.cpu": "1500m", pods: "4", "requests.memory": "1536Mi" },
        hard: { "requests.cpu": "2" },
      },
    });
    const usage = await callerFor(users.operator!).quotas.usage.tenant({ tenant: quotaTenant });
    expect(usage).toMatchObject({ hasQuota: true, source: "sample", ignored: [] });
    expect(usage.note).toMatch(/Showing the last sample/);
    // The alias "memory" is requests.memory, as in a ResourceQuota.
    expect(usage.resources.map((row) => [row.resource, row.used, row.limit, row.percent])).toEqual([
      ["requests.cpu", "1500m", "2", 75],
      ["requests.memory", "1536Mi", "4Gi", 37.5],
      ["pods", "4", "10", 40],
    ]);
  });

  it("says a tenant without a Tenant quota has none", async () => {
    const usage = await callerFor(users.acmeMember!).quotas.usage.tenant({ tenant: "acme" });
    expect(usage.hasQuota).toBe(false);
    expect(usage.resources.every((row) => row.limit === null)).toBe(true);
  });
});

describe("overview", () => {
  it("sums the tenants' limits against the schedulable nodes' allocatable", async () => {
    const overview = await callerFor(users.operator!).quotas.usage.overview();
    expect(overview.nodes.schedulable).toBeGreaterThan(0);
    const cpu = overview.allocation.find((row) => row.resource === "requests.cpu")!;
    expect(cpu.capacityValue).toBeGreaterThan(0);
    expect(cpu.allocatedValue).toBeGreaterThanOrEqual(2);
    expect(cpu.overcommit).toBeCloseTo(Math.floor((cpu.allocatedValue / cpu.capacityValue) * 1000) / 1000, 3);
    const ours = overview.tenants.find((row) => row.tenant === quotaTenant)!;
    expect(ours.hasQuota).toBe(true);
    expect(ours.sampledAt).not.toBeNull();
    expect(overview.top.cpu.some((consumer) => consumer.tenant === quotaTenant)).toBe(true);
  });
});
