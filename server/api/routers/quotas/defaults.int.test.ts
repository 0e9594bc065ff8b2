/**
 * The default namespace share procedures against the real world: the Tenant (its quota) in the run's
 * super cluster, the share and audit events in PostgreSQL, through the tRPC router.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb } from "@/server/db/client";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { cachedDefaultShares } from "@/server/quotas/default-share-repository";
import { deleteTenantResource, tenantApiVersion } from "@/server/tenants/tenant-resources";
import { createUserRepository } from "@/server/users/repository";
import { signInTenantAdmin } from "@/test/integration/control-plane-access";
import { setUpTenantSuite } from "@/test/integration/tenant-suite";
import { type DemoKey, seedDemoUsers, testCaller, testOperator, trpcOutcome } from "@/test/integration/trpc";

const runId = Date.now().toString(36);
const tenant = `qd-${runId}`;

const operator = testOperator();
let conn: ClusterConnection;
let users: Record<DemoKey, SessionUser>;
let tenantAdmin: SessionUser;
let tenantMember: SessionUser;

const caller = (user: SessionUser) => testCaller(user, getDb(), `req-${runId}`);

beforeAll(async () => {
  conn = await setUpTenantSuite(operator);
  setSuperCluster(conn);
  users = await seedDemoUsers(getDb());
  tenantAdmin = await signInTenantAdmin(getDb(), tenant);
  const identity = {
    subject: `${tenant}:${tenant}-dev`,
    tenant,
    name: `Developer of ${tenant}`,
    role: "tenant-member" as const,
    email: null,
  };
  const member = await createUserRepository(getDb()).recordSignIn(identity, new Date());
  tenantMember = { ...identity, id: member.id };
  await caller(operator).tenants.create({
    name: tenant,
    displayName: "Default share",
    version: "1.36",
    admins: [],
  });
  await kubeRequest(conn, {
    method: "PATCH",
    path: `/apis/${tenantApiVersion}/tenants/${tenant}`,
    contentType: "application/merge-patch+json",
    body: { spec: { quota: { hard: { "requests.cpu": "2", pods: "20" } } } },
  });
}, 60_000);

afterAll(async () => {
  await deleteTenantResource(tenant).catch(() => undefined);
  await getDb()
    .namespaceQuotaDefault.deleteMany({ where: { tenant } })
    .catch(() => undefined);
  setSuperCluster(null);
  await disconnectDb();
});

describe("quotas.defaults", () => {
  it("has no default share until the tenant admin chooses one", async () => {
    expect(await caller(tenantMember).quotas.defaults.get({ tenant })).toEqual({
      tenant,
      hard: null,
      updatedBy: null,
      updatedAt: null,
    });
  });

  it("reports every bad entry at once and changes nothing", async () => {
    const [code, message] = await trpcOutcome(
      caller(tenantAdmin).quotas.defaults.set({
        tenant,
        hard: { pods: "-1", "requests.cpu": "3", namespaces: "2", gpus: "1", memory: "1Gi" },
      }),
    );
    expect(code).toBe("BAD_REQUEST");
    expect(message).toMatch(/^Invalid default share — /);
    expect(message).toContain("pods: '-1' is negative");
    expect(message).toContain("unknown resource 'gpus'");
    expect(message).toContain("requests.cpu: 3 is more than the tenant's quota of 2");
    expect(message).toContain("namespaces: a namespace's quota cannot limit it");
    expect(message).toMatch(/Nothing was changed\.$/);
    expect((await caller(tenantAdmin).quotas.defaults.get({ tenant })).hard).toBeNull();
  });

  it("is set by the tenant's admins (canonically, audited), read by its members, hidden from others", async () => {
    const set = await caller(tenantAdmin).quotas.defaults.set({ tenant, hard: { cpu: "500m", pods: "5" } });
    expect(set).toMatchObject({
      tenant,
      hard: { "requests.cpu": "500m", pods: "5" },
      updatedBy: tenantAdmin.name,
    });
    expect((await caller(tenantMember).quotas.defaults.get({ tenant })).hard).toEqual({
      "requests.cpu": "500m",
      pods: "5",
    });
    expect(await cachedDefaultShares({ ttlMs: 0 })(tenant)).toEqual({ "requests.cpu": "500m", pods: "5" });
    const [memberCode, memberMessage] = await trpcOutcome(
      caller(tenantMember).quotas.defaults.set({ tenant, hard: { pods: "1" } }),
    );
    expect(memberCode).toBe("FORBIDDEN");
    expect(memberMessage).toContain("can choose its default namespace share");
    expect((await trpcOutcome(caller(users.globexAdmin).quotas.defaults.get({ tenant })))[0]).toBe(
      "NOT_FOUND",
    );
    expect(
      (await trpcOutcome(caller(users.globexAdmin).quotas.defaults.set({ tenant, hard: null })))[0],
    ).toBe("NOT_FOUND");
    const events = await getDb().auditEvent.findMany({
      where: { tenant, action: "tenant.quota.default-share.set" },
    });
    expect(events).toHaveLength(1);
    expect(events[0]!.detail).toEqual({ before: null, after: { "requests.cpu": "500m", pods: "5" } });
  });

  it("is cleared with null (operators too); clearing nothing records nothing", async () => {
    expect(await caller(operator).quotas.defaults.set({ tenant, hard: null })).toMatchObject({ hard: null });
    expect(await caller(operator).quotas.defaults.set({ tenant, hard: null })).toMatchObject({ hard: null });
    expect(await cachedDefaultShares({ ttlMs: 0 })(tenant)).toBeUndefined();
    const events = await getDb().auditEvent.findMany({
      where: { tenant, action: "tenant.quota.default-share.set" },
      orderBy: { at: "asc" },
    });
    expect(events).toHaveLength(2);
    expect(events[1]!.detail).toEqual({ before: { "requests.cpu": "500m", pods: "5" }, after: null });
  });
});
