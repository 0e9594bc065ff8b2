/**
 * The quota procedures against the real world: Tenant objects in the run's super cluster, templates
 * and audit events in PostgreSQL, and usage read from a real Kubernetes API server — the super
 * cluster standing in for the tenant's control plane (it always has the four system namespaces and
 * their kube-root-ca.crt config maps, so some usage is certain).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb } from "@/server/db/client";
import { createObject, deleteObject, readObject } from "@/server/k8s/apply";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { setControlPlaneDirectory } from "@/server/tenants/control-planes";
import {
  deleteTenantResource,
  type TenantResource,
  tenantApiVersion,
  tenantKind,
} from "@/server/tenants/tenant-resources";
import { signInTenantAdmin, superClusterAccess } from "@/test/integration/control-plane-access";
import { setUpTenantSuite } from "@/test/integration/tenant-suite";
import { type DemoKey, seedDemoUsers, testCaller, testOperator, trpcOutcome } from "@/test/integration/trpc";

const runId = Date.now().toString(36);
const tenant = `qt-${runId}`;
/** A tenant whose control plane does not serve: its usage is unknown. */
const idleTenant = `qti-${runId}`;
const small = `small-${runId}`;
const medium = `medium-${runId}`;
const namespace = `qtp-${runId}`;

const operator = testOperator();
let conn: ClusterConnection;
let users: Record<DemoKey, SessionUser>;
let tenantAdmin: SessionUser;

const caller = (user: SessionUser) => testCaller(user, getDb(), `req-${runId}`);

async function quotaSpec(name = tenant): Promise<TenantResource["spec"]["quota"]> {
  const resource = await readObject<TenantResource>(conn, {
    apiVersion: tenantApiVersion,
    kind: tenantKind,
    metadata: { name },
  });
  return resource.spec.quota;
}

beforeAll(async () => {
  conn = await setUpTenantSuite(operator);
  setSuperCluster(conn);
  users = await seedDemoUsers(getDb());
  tenantAdmin = await signInTenantAdmin(getDb(), tenant);
  setControlPlaneDirectory({
    async lookup(name) {
      if (name === tenant) return { state: "ready", access: superClusterAccess(conn), version: "1.36" };
      if (name === idleTenant) return { state: "unavailable", phase: "Provisioning", message: "starting" };
      return { state: "absent" };
    },
  });
  // The default template new tenants start with.
  await caller(operator).quotas.templates.create({
    name: small,
    description: "2 CPU, 4Gi, 20 pods",
    hard: { "requests.cpu": "2", memory: "4Gi", pods: "20" },
    isDefault: true,
  });
  for (const name of [tenant, idleTenant]) {
    await caller(operator).tenants.create({ name, displayName: "Quota test", version: "1.36", admins: [] });
  }
}, 60_000);

afterAll(async () => {
  setControlPlaneDirectory(null);
  await deleteObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }).catch(
    () => undefined,
  );
  for (const name of [tenant, idleTenant]) await deleteTenantResource(name).catch(() => undefined);
  await getDb()
    .quotaTemplate.deleteMany({ where: { name: { in: [small, medium] } } })
    .catch(() => undefined);
  setSuperCluster(null);
  await disconnectDb();
});

describe("a new tenant", () => {
  it("starts with the default template's quota", async () => {
    expect(await quotaSpec()).toEqual({
      hard: { "requests.cpu": "2", "requests.memory": "4Gi", pods: "20" },
      template: small,
    });
    const view = await caller(operator).quotas.get({ tenant });
    expect(view).toMatchObject({
      tenant,
      template: small,
      hard: { "requests.cpu": "2", "requests.memory": "4Gi", pods: "20" },
    });
    expect(Number(view.used?.namespaces)).toBeGreaterThanOrEqual(4);
  });
});

describe("quotas.get", () => {
  it("lets the tenant's members read their quota and hides it from others", async () => {
    expect(await caller(tenantAdmin).quotas.get({ tenant })).toMatchObject({ tenant, template: small });
    expect((await trpcOutcome(caller(users.acmeMember).quotas.get({ tenant })))[0]).toBe("NOT_FOUND");
    expect((await trpcOutcome(caller(users.globexAdmin).quotas.get({ tenant })))[0]).toBe("NOT_FOUND");
  });

  it("says usage is unknown while the control plane does not serve", async () => {
    expect(await caller(operator).quotas.get({ tenant: idleTenant })).toMatchObject({
      used: null,
      over: [],
    });
  });
});

describe("quotas.set", () => {
  it("reports every bad quantity and unknown resource at once, changing nothing", async () => {
    const before = await quotaSpec();
    const [code, message] = await trpcOutcome(
      caller(operator).quotas.set({
        tenant,
        hard: { pods: "-1", "requests.cpu": "1.5.3", "requests.memory": "12Xi", gpus: "1", services: "5" },
      }),
    );
    expect(code).toBe("BAD_REQUEST");
    expect(message).toMatch(/^Invalid quota — /);
    expect(message).toContain("pods: '-1' is negative");
    expect(message).toContain("requests.cpu: '1.5.3' is not a quantity");
    expect(message).toContain("requests.memory: '12Xi' is not a quantity");
    expect(message).toContain("unknown resource 'gpus'");
    expect(await quotaSpec()).toEqual(before);

    const [templateCode, templateMessage] = await trpcOutcome(
      caller(operator).quotas.set({ tenant, template: "no-such-template" }),
    );
    expect(templateCode).toBe("NOT_FOUND");
    expect(templateMessage).toContain(small);
    expect(await quotaSpec()).toEqual(before);
  });

  it("is for operators only: a tenant admin reads but cannot set or clear", async () => {
    const before = await quotaSpec();
    const [code, message] = await trpcOutcome(
      caller(tenantAdmin).quotas.set({ tenant, hard: { pods: "99" } }),
    );
    expect([code, message]).toEqual(["FORBIDDEN", "Only cluster operators can do this."]);
    expect((await trpcOutcome(caller(tenantAdmin).quotas.clear({ tenant })))[0]).toBe("FORBIDDEN");
    expect((await trpcOutcome(caller(tenantAdmin).quotas.preview({ tenant, hard: {} })))[0]).toBe(
      "FORBIDDEN",
    );
    expect(await quotaSpec()).toEqual(before);
  });

  it("refuses limits below current usage unless allowed, then warns what is over", async () => {
    const before = await quotaSpec();
    const [code, message] = await trpcOutcome(
      caller(operator).quotas.set({ tenant, hard: { namespaces: "1", pods: "1000" } }),
    );
    expect(code).toBe("PRECONDITION_FAILED");
    expect(message).toMatch(/already uses more than the new quota allows — namespaces: used \d+, limit 1\./);
    expect(message).not.toContain("pods:");
    expect(await quotaSpec()).toEqual(before);

    const applied = await caller(operator).quotas.set({
      tenant,
      hard: { namespaces: "1", pods: "1000" },
      allowBelowUsage: true,
    });
    expect(applied).toMatchObject({ tenant, hard: { pods: "1000", namespaces: "1" }, template: null });
    expect(applied.over).toEqual([{ resource: "namespaces", used: expect.any(String), limit: "1" }]);
    expect(applied.warnings).toEqual([expect.stringMatching(/^over quota: namespaces: used \d+, limit 1$/)]);
    // The template's limits are replaced, not merged into; the template is no longer named.
    expect(await quotaSpec()).toEqual({ hard: { pods: "1000", namespaces: "1" } });
    expect((await caller(tenantAdmin).quotas.get({ tenant })).over).toEqual([
      { resource: "namespaces", used: expect.any(String), limit: "1" },
    ]);

    // An unrelated change is not blocked by a limit that was already below usage.
    const again = await caller(operator).quotas.set({ tenant, hard: { namespaces: "1", pods: "999" } });
    expect(again.warnings).toHaveLength(1);

    const events = await getDb().auditEvent.findMany({
      where: { tenant, action: "tenant.quota.set" },
      orderBy: { at: "asc" },
    });
    expect(events).toHaveLength(2);
    expect(events[0]!.detail).toMatchObject({
      before: { template: small, hard: { pods: "20" } },
      after: { hard: { pods: "1000", namespaces: "1" } },
      allowBelowUsage: true,
    });
  });

  it("copies a template with explicit limits over it, and aliases land under their resource", async () => {
    const result = await caller(operator).quotas.set({
      tenant,
      template: small,
      hard: { cpu: "3", services: "5" },
    });
    expect(result).toMatchObject({ template: small, warnings: [] });
    expect(await quotaSpec()).toEqual({
      hard: { "requests.cpu": "3", "requests.memory": "4Gi", pods: "20", services: "5" },
      template: small,
    });
  });

  it("sets an idle tenant's quota with a warning that usage was not checked", async () => {
    const result = await caller(operator).quotas.set({ tenant: idleTenant, hard: { pods: "1" } });
    expect(result.warnings).toEqual([expect.stringMatching(/could not be read/)]);
    expect(await quotaSpec(idleTenant)).toEqual({ hard: { pods: "1" } });
  });
});

describe("quotas.preview", () => {
  it("shows what would be over: resources with their workloads, namespace shares, namespaces alone", async () => {
    await createObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    await createObject(conn, {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "share", namespace },
      spec: { hard: { pods: "5" } },
    });
    await createObject(conn, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "worker", namespace },
      spec: { containers: [{ name: "main", image: "nginx" }], terminationGracePeriodSeconds: 0 },
    });
    const preview = await caller(operator).quotas.preview({ tenant, hard: { pods: "0" } });
    expect(preview.current).toMatchObject({ pods: "20" });
    expect(preview.hard).toEqual({ pods: "0" });
    const pods = preview.over.find((entry) => entry.resource === "pods");
    expect(pods?.limit).toBe("0");
    expect(Number(pods?.used)).toBeGreaterThanOrEqual(1);
    expect(pods?.namespaces.length).toBeGreaterThan(0);
    expect(pods?.workloads.length).toBeGreaterThan(0);
    expect(preview.shares.find((entry) => entry.resource === "pods")?.namespaces).toContainEqual({
      namespace,
      share: "5",
    });
    expect(preview.namespacesOver).toContainEqual({ namespace, resource: "pods", used: "1", limit: "0" });
    // Nothing was applied.
    expect((await quotaSpec())?.hard?.pods).toBe("20");

    const [code, message] = await trpcOutcome(
      caller(operator).quotas.preview({ tenant, hard: { pods: "x" } }),
    );
    expect(code).toBe("BAD_REQUEST");
    expect(message).toContain("pods: 'x' is not a quantity");
  });
});

describe("quotas.templates", () => {
  it("validates a template's limits all at once and stores them canonically", async () => {
    const [code, message] = await trpcOutcome(
      caller(operator).quotas.templates.create({ name: medium, hard: { pods: "1.5", "count/pods": "3" } }),
    );
    expect(code).toBe("BAD_REQUEST");
    expect(message).toContain("pods: '1.5' is not a whole number");
    expect(message).toContain("unknown resource 'count/pods'");
    expect(await getDb().quotaTemplate.findUnique({ where: { name: medium } })).toBeNull();

    const created = await caller(operator).quotas.templates.create({
      name: medium,
      hard: { cpu: "4000m", "requests.memory": "8192Mi", pods: "50" },
    });
    expect(created).toMatchObject({
      hard: { "requests.cpu": "4", "requests.memory": "8Gi", pods: "50" },
      isDefault: false,
    });
    const duplicate = await trpcOutcome(
      caller(operator).quotas.templates.create({ name: medium, hard: { pods: "1" } }),
    );
    expect(duplicate[0]).toBe("CONFLICT");
  });

  it("keeps at most one default", async () => {
    await caller(operator).quotas.templates.setDefault({ name: medium });
    const list = await caller(operator).quotas.templates.list();
    const ours = list.filter((template) => [small, medium].includes(template.name));
    expect(ours.map((template) => [template.name, template.isDefault])).toEqual([
      [medium, true],
      [small, false],
    ]);
    expect(list.filter((template) => template.isDefault)).toHaveLength(1);
    expect(ours.find((template) => template.name === small)?.tenants).toEqual([tenant]);
    await caller(operator).quotas.templates.setDefault({ name: null });
    expect(await getDb().quotaTemplate.count({ where: { isDefault: true } })).toBe(0);
  });

  it("refuses to delete a template in use, naming the tenants, and templates are for operators", async () => {
    const [code, message] = await trpcOutcome(caller(operator).quotas.templates.delete({ name: small }));
    expect(code).toBe("CONFLICT");
    expect(message).toContain(`in use by tenant ${tenant}`);
    expect(await getDb().quotaTemplate.findUnique({ where: { name: small } })).not.toBeNull();
    expect((await trpcOutcome(caller(tenantAdmin).quotas.templates.list()))[0]).toBe("FORBIDDEN");
    expect((await trpcOutcome(caller(tenantAdmin).quotas.templates.delete({ name: medium })))[0]).toBe(
      "FORBIDDEN",
    );

    const updated = await caller(operator).quotas.templates.update({ name: medium, hard: { pods: "60" } });
    expect(updated.hard).toEqual({ pods: "60" });
    await caller(operator).quotas.templates.delete({ name: medium });
    expect((await trpcOutcome(caller(operator).quotas.templates.delete({ name: medium })))[0]).toBe(
      "NOT_FOUND",
    );
  });
});

describe("quotas.clear", () => {
  it("removes the quota, after which the template can go", async () => {
    expect(await caller(operator).quotas.clear({ tenant })).toEqual({ tenant, cleared: true });
    expect(await quotaSpec()).toBeUndefined();
    expect(await caller(operator).quotas.get({ tenant })).toMatchObject({
      hard: {},
      template: null,
      over: [],
    });
    expect(await caller(operator).quotas.clear({ tenant })).toEqual({ tenant, cleared: false });
    await caller(operator).quotas.templates.delete({ name: small });
    const actions = await getDb().auditEvent.findMany({
      where: { action: { startsWith: "quota.template." }, target: { in: [small, medium] } },
      orderBy: { at: "asc" },
    });
    expect(actions.map((event) => `${event.action} ${event.target}`)).toEqual([
      `quota.template.create ${small}`,
      `quota.template.create ${medium}`,
      `quota.template.set-default ${medium}`,
      `quota.template.set-default ${medium}`,
      `quota.template.update ${medium}`,
      `quota.template.delete ${medium}`,
      `quota.template.delete ${small}`,
    ]);
    expect(await getDb().auditEvent.count({ where: { tenant, action: "tenant.quota.clear" } })).toBe(1);
  });
});
