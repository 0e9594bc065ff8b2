import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb } from "@/server/db/client";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { deleteTenantResource } from "@/server/tenants/tenant-resources";
import { setUpTenantSuite } from "@/test/integration/tenant-suite";
import { testCaller, testOperator, testTenantAdmin, trpcOutcome } from "@/test/integration/trpc";

const operator = testOperator();
const tenantAdmin = testTenantAdmin();

// The resource procedures never touch ctx.db; auditing writes through getDb().
const callerFor = (user: SessionUser) => testCaller(user);

const codeOf = trpcOutcome;

// Unique per run, so a crashed earlier run cannot collide.
const name = `it-${Date.now().toString(36)}`;
const valid = { name, displayName: "Integration test", version: "1.36" as const };
let conn: ClusterConnection;

beforeAll(async () => {
  conn = await setUpTenantSuite(operator);
}, 60_000);

afterEach(() => setSuperCluster(null));

afterAll(async () => {
  await deleteTenantResourceQuietly(name);
  await disconnectDb();
});

async function auditActions(tenant: string): Promise<string[]> {
  const events = await getDb().auditEvent.findMany({ where: { tenant }, orderBy: { at: "asc" } });
  return events.map((event) => `${event.action} by ${event.actorName}`);
}

async function deleteTenantResourceQuietly(tenant: string) {
  setSuperCluster(conn);
  try {
    await deleteTenantResource(tenant);
  } finally {
    setSuperCluster(null);
  }
}

describe("Tenant resources through the tenants router", () => {
  it("creates a tenant that the list shows as Pending, and refuses the same name again", async () => {
    setSuperCluster(conn);
    const created = await callerFor(operator).tenants.create({ ...valid, admins: ["alice"] });
    expect(created).toMatchObject({ name, provisioner: "local", version: "1.36", suspended: false });

    const listed = (await callerFor(operator).tenants.resources()).find((tenant) => tenant.name === name);
    // No reconciler runs against this cluster here, so status stays empty: Pending.
    expect(listed).toMatchObject({
      name,
      displayName: "Integration test",
      phase: "Pending",
      ready: "Unknown",
    });
    expect(await auditActions(name)).toEqual(["tenant.create by Olivia"]);

    const [code, message] = await codeOf(callerFor(operator).tenants.create(valid));
    expect(code).toBe("CONFLICT");
    expect(message).toContain(`"${name}" already exists`);
  }, 30_000);

  it("rejects a bad name, a reserved name and an unsupported version, naming the field", async () => {
    setSuperCluster(conn);
    const caller = callerFor(operator);
    for (const [input, field] of [
      [{ ...valid, name: "Bad_Name" }, "name:"],
      [{ ...valid, name: "ab" }, "name:"],
      [{ ...valid, name: "1abc" }, "name:"],
      [{ ...valid, name: "kube-system" }, "name:"],
      [{ ...valid, name: "x".repeat(41) }, "name:"],
      [{ ...valid, version: "1.20" }, "version:"],
      [{ ...valid, displayName: "" }, "displayName:"],
      [{ ...valid, admins: ["Not A User"] }, "admins.0:"],
    ] as const) {
      const [code, message] = await codeOf(caller.tenants.create(input as never));
      expect(code, JSON.stringify(input)).toBe("BAD_REQUEST");
      expect(message).toContain(field);
    }
    expect((await codeOf(caller.tenants.create({ ...valid, name: "kube-system" })))[1]).toContain("reserved");
  });

  it("is for operators only", async () => {
    setSuperCluster(conn);
    const caller = callerFor(tenantAdmin);
    expect((await codeOf(caller.tenants.resources()))[0]).toBe("FORBIDDEN");
    expect((await codeOf(caller.tenants.create({ ...valid, name: "sneaky" })))[0]).toBe("FORBIDDEN");
    expect((await codeOf(caller.tenants.delete({ name, confirm: name })))[0]).toBe("FORBIDDEN");
  });

  it("deletes only with the typed name, then the tenant is gone", async () => {
    setSuperCluster(conn);
    const caller = callerFor(operator);
    const [code, message] = await codeOf(caller.tenants.delete({ name, confirm: "wrong" }));
    expect(code).toBe("BAD_REQUEST");
    expect(message).toContain("type the tenant's name to confirm");
    expect((await caller.tenants.resources()).some((tenant) => tenant.name === name)).toBe(true);

    expect(await caller.tenants.delete({ name, confirm: name })).toEqual({ name });
    // The informer sees the deletion shortly after the API does (finalizers may delay it).
    await expect
      .poll(async () => (await caller.tenants.resources()).some((tenant) => tenant.name === name), {
        timeout: 20_000,
      })
      .toBe(false);
    expect(await auditActions(name)).toEqual(["tenant.create by Olivia", "tenant.delete by Olivia"]);
    expect((await codeOf(caller.tenants.delete({ name, confirm: name })))[0]).toBe("NOT_FOUND");
  }, 30_000);
});
