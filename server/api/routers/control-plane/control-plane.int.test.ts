import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { updateStatusWithRetry } from "@/server/controllers/status";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb, setDatabaseUrl } from "@/server/db/client";
import { createObject, deleteObject, readObject } from "@/server/k8s/apply";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { isNotFound } from "@/server/k8s/errors";
import { eventually, testSuperCluster } from "@/server/k8s/test-cluster";
import { setGatewayEndpoint } from "@/server/kubeconfigs/gateway-endpoint";
import { createLogger } from "@/server/logger";
import { type ControlPlaneLookup, setControlPlaneDirectory } from "@/server/tenants/control-planes";
import type { TenantStatus } from "@/server/tenants/status";
import {
  createTenantResource,
  deleteTenantResource,
  tenantApiVersion,
} from "@/server/tenants/tenant-resources";
import { signInTenantAdmin, superClusterAccess } from "@/test/integration/control-plane-access";
import { testDatabaseUrl } from "@/test/integration/database";
import { type DemoKey, seedDemoUsers, testCaller, trpcOutcome } from "@/test/integration/trpc";

const runId = Date.now().toString(36);
/** A tenant of its own for the summary (its Tenant object lives in the shared super cluster). */
const summaryTenant = `cps-${runId}`;
/** A tenant whose users signed in but which has no Tenant object at all. */
const bareTenant = `cpb-${runId}`;
const rbacName = `ring0-cp-test-${runId}`;
const namespace = `cpt-${runId}`;

let conn: ClusterConnection;
let users: Record<DemoKey, SessionUser>;
let summaryAdmin: SessionUser;
let bareAdmin: SessionUser;
let globexState: ControlPlaneLookup = {
  state: "unavailable",
  phase: "Provisioning",
  message: "etcd is starting",
};

const clusterRole = (name: string, verbs: string[]) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name },
  rules: [{ apiGroups: [""], resources: ["namespaces"], verbs }],
});
const clusterRoleBinding = (name: string, role: string, group: string) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
  subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: group }],
});

const caller = (user: SessionUser) => testCaller(user, getDb(), `req-${runId}`);

async function auditOf(action: string, target: string) {
  return getDb().auditEvent.findMany({ where: { action, target }, orderBy: { at: "asc" } });
}

beforeAll(async () => {
  setDatabaseUrl(await testDatabaseUrl());
  users = await seedDemoUsers(getDb());
  summaryAdmin = await signInTenantAdmin(getDb(), summaryTenant);
  bareAdmin = await signInTenantAdmin(getDb(), bareTenant);
  conn = testSuperCluster();
  await installCrds(conn, createLogger({}, "error"));
  setSuperCluster(conn);
  setControlPlaneDirectory({
    async lookup(tenant) {
      if (tenant === "acme") return { state: "ready", access: superClusterAccess(conn), version: "1.36" };
      if (tenant === "globex") return globexState;
      return { state: "absent" };
    },
  });
  // acme's admins manage namespaces; its members (and everyone else of acme) only read them.
  await createObject(conn, clusterRole(`${rbacName}-admin`, ["get", "list", "watch", "create", "delete"]));
  await createObject(conn, clusterRole(`${rbacName}-read`, ["get", "list", "watch"]));
  await createObject(
    conn,
    clusterRoleBinding(`${rbacName}-admin`, `${rbacName}-admin`, "ring0:tenant:acme:admins"),
  );
  await createObject(conn, clusterRoleBinding(`${rbacName}-read`, `${rbacName}-read`, "ring0:tenant:acme"));
  await createTenantResource(
    { name: summaryTenant, displayName: "Summary", provisioner: "local", version: "1.36", admins: [] },
    { name: "test" },
  );
}, 60_000);

afterAll(async () => {
  setControlPlaneDirectory(null);
  setGatewayEndpoint(null);
  for (const kind of ["ClusterRoleBinding", "ClusterRole"])
    for (const suffix of ["admin", "read"])
      await deleteObject(conn, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind,
        metadata: { name: `${rbacName}-${suffix}` },
      }).catch(() => undefined);
  await deleteObject(conn, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }).catch(
    () => undefined,
  );
  await deleteTenantResource(summaryTenant).catch(() => undefined);
  setSuperCluster(null);
  await disconnectDb();
}, 60_000);

describe("controlPlane.namespaces, acting as the user in the tenant's control plane", () => {
  it("lets acme's admin list, create and delete a namespace, audited", async () => {
    const admin = caller(users.acmeAdmin);
    const before = await admin.controlPlane.namespaces.list({ tenant: "acme" });
    expect(before.state).toBe("serving");
    if (before.state !== "serving") return;
    expect(before.namespaces.map((row) => row.name)).toContain("kube-system");

    const created = await admin.controlPlane.namespaces.create({ tenant: "acme", name: namespace });
    expect(created).toMatchObject({ name: namespace, phase: "Active" });
    const listed = await admin.controlPlane.namespaces.list({ tenant: "acme" });
    expect(
      listed.state === "serving" && listed.namespaces.find((row) => row.name === namespace),
    ).toMatchObject({
      phase: "Active",
    });

    const deleted = await admin.controlPlane.namespaces.delete({
      tenant: "acme",
      name: namespace,
      confirm: namespace,
    });
    expect(deleted.name).toBe(namespace);
    await eventually(async () => {
      try {
        const left = await readObject(conn, {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: namespace },
        });
        return (left as { status?: { phase?: string } }).status?.phase === "Terminating";
      } catch (error) {
        return isNotFound(error);
      }
    });

    const creates = await auditOf("namespace.create", namespace);
    expect(creates).toHaveLength(1);
    expect(creates[0]).toMatchObject({ tenant: "acme", result: "success", actorName: users.acmeAdmin.name });
    expect((await auditOf("namespace.delete", namespace))[0]).toMatchObject({
      tenant: "acme",
      result: "success",
    });
  });

  it("impersonates the user: the control plane's RBAC refuses a member's change with its own message", async () => {
    const member = caller(users.acmeMember);
    const listed = await member.controlPlane.namespaces.list({ tenant: "acme" });
    expect(listed.state).toBe("serving");

    const [code, message] = await trpcOutcome(
      member.controlPlane.namespaces.delete({ tenant: "acme", name: "kube-public", confirm: "kube-public" }),
    );
    expect(code).toBe("FORBIDDEN");
    expect(message).toContain('User "acme:acme-member" cannot delete resource "namespaces"');
    const [createCode, createMessage] = await trpcOutcome(
      member.controlPlane.namespaces.create({ tenant: "acme", name: `${namespace}-m` }),
    );
    expect(createCode).toBe("FORBIDDEN");
    expect(createMessage).toContain("cannot create resource");
    const denied = await auditOf("namespace.delete", "kube-public");
    expect(denied.at(-1)).toMatchObject({
      tenant: "acme",
      result: "denied",
      actorName: users.acmeMember.name,
    });
  });

  it("answers another tenant's user NOT_FOUND, like a tenant that does not exist", async () => {
    const globex = caller(users.globexAdmin);
    for (const call of [
      globex.controlPlane.namespaces.list({ tenant: "acme" }),
      globex.controlPlane.namespaces.create({ tenant: "acme", name: `${namespace}-g` }),
      globex.controlPlane.namespaces.delete({ tenant: "acme", name: "default", confirm: "default" }),
      globex.controlPlane.summary({ tenant: "acme" }),
    ]) {
      expect(await trpcOutcome(call)).toEqual(["NOT_FOUND", 'Tenant "acme" was not found.']);
    }
  });

  it("says which phase a control plane that is not serving is in", async () => {
    const globex = caller(users.globexAdmin);
    expect(await globex.controlPlane.namespaces.list({ tenant: "globex" })).toEqual({
      state: "not-serving",
      phase: "Provisioning",
      message: 'The control plane of tenant "globex" is Provisioning: etcd is starting',
    });
    expect(
      await trpcOutcome(globex.controlPlane.namespaces.create({ tenant: "globex", name: "web" })),
    ).toEqual([
      "SERVICE_UNAVAILABLE",
      'The control plane of tenant "globex" is Provisioning: etcd is starting',
    ]);
    // Nothing was attempted, so nothing is audited.
    expect(await auditOf("namespace.create", "web")).toEqual([]);

    const bare = caller(bareAdmin);
    expect(await bare.controlPlane.namespaces.list({ tenant: bareTenant })).toMatchObject({
      state: "not-serving",
      phase: "Absent",
    });
  });

  it("reports an unreachable control plane as SERVICE_UNAVAILABLE naming it", async () => {
    globexState = {
      state: "ready",
      access: { ...superClusterAccess(conn), server: "https://127.0.0.1:9" },
    };
    try {
      const [code, message] = await trpcOutcome(
        caller(users.globexAdmin).controlPlane.namespaces.list({ tenant: "globex" }),
      );
      expect(code).toBe("SERVICE_UNAVAILABLE");
      expect(message).toContain('Kubernetes API server of tenant "globex" is unreachable');
    } finally {
      globexState = { state: "unavailable", phase: "Provisioning", message: "etcd is starting" };
    }
  });

  it("validates names with messages that name the field", async () => {
    const admin = caller(users.acmeAdmin);
    const [code, message] = await trpcOutcome(
      admin.controlPlane.namespaces.create({ tenant: "acme", name: "Not_A_Label" }),
    );
    expect(code).toBe("BAD_REQUEST");
    expect(message).toContain("name: expected a DNS-1123 label");
    expect(
      (await trpcOutcome(admin.controlPlane.namespaces.create({ tenant: "acme", name: "a".repeat(64) })))[1],
    ).toContain("name: expected at most 63 characters");
    expect(
      (
        await trpcOutcome(
          admin.controlPlane.namespaces.delete({ tenant: "acme", name: "web", confirm: "wbe" }),
        )
      )[1],
    ).toContain("confirm: expected the namespace's name");
  });
});

describe("controlPlane.summary", () => {
  it("summarises the tenant's own Tenant object with the gateway URL, never the control plane's access", async () => {
    setGatewayEndpoint({ gatewayUrl: "https://ring0.example.com:3443" });
    const admin = caller(summaryAdmin);
    expect(await admin.controlPlane.summary({ tenant: summaryTenant })).toMatchObject({
      state: "present",
      phase: "Pending",
      ready: "Unknown",
      readySince: null,
    });

    const readyAt = new Date(Date.now() - 60_000).toISOString();
    await updateStatusWithRetry<TenantStatus>(
      conn,
      { apiVersion: tenantApiVersion, resource: "tenants", name: summaryTenant },
      (status) => ({
        ...status,
        phase: "Ready",
        version: "1.36.4",
        provisioner: "local",
        endpoint: "https://127.0.0.1:39999",
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "Ready",
            message: "The control plane serves and its defaults are applied.",
            lastTransitionTime: readyAt,
          },
        ],
      }),
    );
    const feed = await admin.controlPlane.watchSummary({ tenant: summaryTenant });
    const iterator = feed[Symbol.asyncIterator]();
    try {
      await eventually(async () => {
        const next = (await iterator.next()).value;
        return next?.state === "present" && next.phase === "Ready" ? next : undefined;
      });
    } finally {
      await iterator.return?.();
    }
    const summary = await admin.controlPlane.summary({ tenant: summaryTenant });
    expect(summary).toEqual({
      tenant: summaryTenant,
      state: "present",
      phase: "Ready",
      ready: "True",
      message: "The control plane serves and its defaults are applied.",
      version: "1.36.4",
      suspended: false,
      gatewayUrl: `https://ring0.example.com:3443/k8s/tenants/${summaryTenant}`,
      readySince: readyAt,
    });
    expect(JSON.stringify(summary)).not.toContain("39999");
  });

  it("reads absent for a tenant without a Tenant object", async () => {
    expect(await caller(bareAdmin).controlPlane.summary({ tenant: bareTenant })).toEqual({
      tenant: bareTenant,
      state: "absent",
    });
  });
});
