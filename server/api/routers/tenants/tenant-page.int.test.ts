import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { updateStatusWithRetry } from "@/server/controllers/status";
import { disconnectDb, getDb } from "@/server/db/client";
import { readObject } from "@/server/k8s/apply";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { recordEvent } from "@/server/k8s/events";
import { availableVersions } from "@/server/provisioners/versions";
import type { TenantStatus } from "@/server/tenants/status";
import { watchTenantDetail } from "@/server/tenants/tenant-detail";
import {
  deleteTenantResource,
  type TenantResource,
  tenantApiVersion,
  tenantKind,
} from "@/server/tenants/tenant-resources";
import { setUpTenantSuite } from "@/test/integration/tenant-suite";
import { testCaller, testOperator, testTenantAdmin, trpcOutcome } from "@/test/integration/trpc";

const operator = testOperator();
const tenantAdmin = testTenantAdmin();

// Unique per run, so a crashed earlier run cannot collide.
const name = `itp-${Date.now().toString(36)}`;
let conn: ClusterConnection;

beforeAll(async () => {
  conn = await setUpTenantSuite(operator);
  setSuperCluster(conn);
  await testCaller(operator).tenants.create({ name, displayName: "Page test", version: "1.36", admins: [] });
  setSuperCluster(null);
}, 60_000);

afterEach(() => setSuperCluster(null));

afterAll(async () => {
  setSuperCluster(conn);
  try {
    await deleteTenantResource(name);
  } finally {
    setSuperCluster(null);
  }
  await disconnectDb();
});

async function auditActions(tenant: string): Promise<string[]> {
  const events = await getDb().auditEvent.findMany({ where: { tenant }, orderBy: { at: "asc" } });
  return events.map((event) => `${event.action} by ${event.actorName}`);
}

/** The Tenant as the API server has it (not through the informer the procedures read). */
function fetchTenant(): Promise<TenantResource> {
  return readObject<TenantResource>(conn, {
    apiVersion: tenantApiVersion,
    kind: tenantKind,
    metadata: { name },
  });
}

async function readSpec(): Promise<TenantResource["spec"]> {
  return (await fetchTenant()).spec;
}

describe("The tenant page's procedures", () => {
  it("gets a tenant with its status, conditions and events; an absent one is NOT_FOUND", async () => {
    setSuperCluster(conn);
    const caller = testCaller(operator);
    // No controller runs here: write the status a reconcile would, and an Event.
    const at = new Date().toISOString();
    await updateStatusWithRetry<TenantStatus>(
      conn,
      { apiVersion: tenantApiVersion, resource: "tenants", name },
      (status) => ({
        ...status,
        phase: "Failed",
        provisioner: "local",
        endpoint: "https://127.0.0.1:6443",
        timings: { createdAt: at, provisioningStartedAt: at },
        conditions: [
          {
            type: "Ready",
            status: "False",
            reason: "UnsupportedVersion",
            message: "Kubernetes 1.20 is not available.",
            lastTransitionTime: at,
          },
        ],
      }),
    );
    const tenant = await fetchTenant();
    await recordEvent(
      conn,
      { apiVersion: tenantApiVersion, kind: tenantKind, name, uid: tenant.metadata.uid },
      { type: "Warning", reason: "Failed", message: "Kubernetes 1.20 is not available." },
    );

    await expect
      .poll(async () => (await caller.tenants.get({ name })).phase, { timeout: 10_000 })
      .toBe("Failed");
    const detail = await caller.tenants.get({ name });
    expect(detail).toMatchObject({
      name,
      displayName: "Page test",
      provisioner: "local",
      version: "1.36",
      suspended: false,
      ready: "False",
      readyMessage: "Kubernetes 1.20 is not available.",
      endpoint: "https://127.0.0.1:6443",
      uid: tenant.metadata.uid,
      timings: { createdAt: at, provisioningStartedAt: at, readyAt: null },
      conditions: [{ type: "Ready", status: "False", reason: "UnsupportedVersion" }],
    });
    expect(detail.events).toEqual([expect.objectContaining({ type: "Warning", reason: "Failed", count: 1 })]);

    const [code, message] = await trpcOutcome(caller.tenants.get({ name: "no-such-tenant" }));
    expect(code).toBe("NOT_FOUND");
    expect(message).toContain('"no-such-tenant"');
    const [badCode, badMessage] = await trpcOutcome(caller.tenants.get({ name: "Bad_Name" }));
    expect(badCode).toBe("BAD_REQUEST");
    expect(badMessage).toContain("name:");
  });

  it("streams the tenant and again after it changes", async () => {
    setSuperCluster(conn);
    const abort = new AbortController();
    const feed = watchTenantDetail(name, abort.signal, 200);
    try {
      const first = await feed.next();
      expect(first.value).toMatchObject({ name });
      await updateStatusWithRetry<TenantStatus>(
        conn,
        { apiVersion: tenantApiVersion, resource: "tenants", name },
        (status) => ({ ...status, version: "v1.36.4-watch" }),
      );
      let seen: string | null | undefined;
      for (let i = 0; i < 20 && seen !== "v1.36.4-watch"; i++) {
        seen = ((await feed.next()).value as { runningVersion: string | null } | null)?.runningVersion;
      }
      expect(seen).toBe("v1.36.4-watch");
    } finally {
      abort.abort();
      await feed.return(undefined);
    }
  });

  it("suspends and resumes through the spec, audited", async () => {
    setSuperCluster(conn);
    const caller = testCaller(operator);
    expect(await caller.tenants.setSuspended({ name, suspend: true })).toMatchObject({
      name,
      suspended: true,
    });
    expect((await readSpec())?.suspend).toBe(true);
    // The rest of the spec Ring0 applied at creation is untouched.
    expect((await readSpec())?.displayName).toBe("Page test");
    expect(await caller.tenants.setSuspended({ name, suspend: false })).toMatchObject({ suspended: false });
    expect((await readSpec())?.suspend).toBe(false);
    expect(await auditActions(name)).toEqual([
      "tenant.create by Olivia",
      "tenant.suspend by Olivia",
      "tenant.resume by Olivia",
    ]);
    expect(
      (await trpcOutcome(caller.tenants.setSuspended({ name: "no-such-tenant", suspend: true })))[0],
    ).toBe("NOT_FOUND");
  });

  it("upgrades to an available version and refuses an unknown one, naming the available ones", async () => {
    setSuperCluster(conn);
    const caller = testCaller(operator);
    const available = availableVersions();
    expect(await caller.tenants.versions()).toEqual(available);

    const target = available[0] as string;
    expect(await caller.tenants.upgrade({ name, version: target })).toMatchObject({ name, version: target });
    const spec = await readSpec();
    expect(spec?.controlPlane).toEqual({ provisioner: "local", version: target });

    const [code, message] = await trpcOutcome(caller.tenants.upgrade({ name, version: "1.20" }));
    expect(code).toBe("BAD_REQUEST");
    expect(message).toContain("1.20 is not available");
    for (const version of available) expect(message).toContain(version);
    expect((await readSpec())?.controlPlane?.version).toBe(target);

    expect((await trpcOutcome(caller.tenants.upgrade({ name, version: "" })))[1]).toContain("version:");
    expect((await auditActions(name)).at(-1)).toBe("tenant.upgrade by Olivia");
  });

  it("is for operators only", async () => {
    setSuperCluster(conn);
    const caller = testCaller(tenantAdmin);
    const target = availableVersions()[0] as string;
    for (const call of [
      caller.tenants.get({ name }),
      caller.tenants.versions(),
      caller.tenants.setSuspended({ name, suspend: true }),
      caller.tenants.upgrade({ name, version: target }),
    ]) {
      expect((await trpcOutcome(call))[0]).toBe("FORBIDDEN");
    }
    const anonymous = testCaller(null);
    expect((await trpcOutcome(anonymous.tenants.get({ name })))[0]).toBe("UNAUTHORIZED");
    expect((await fetchTenant()).spec.suspend).toBe(false);
  });
});
