/**
 * The portal's workloads procedures against a real API server: the run's local super cluster
 * stands in for acme's control plane (as in control-plane.int.test.ts), and every read acts as
 * the signed-in user, so RBAC granted here decides.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/auth/roles";
import { disconnectDb, getDb, setDatabaseUrl } from "@/server/db/client";
import { createObject, deleteObject } from "@/server/k8s/apply";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { eventually, testNamespace, testSuperCluster } from "@/server/k8s/test-cluster";
import { type ControlPlaneLookup, setControlPlaneDirectory } from "@/server/tenants/control-planes";
import { superClusterAccess } from "@/test/integration/control-plane-access";
import { testDatabaseUrl } from "@/test/integration/database";
import { type DemoKey, seedDemoUsers, testCaller, trpcOutcome } from "@/test/integration/trpc";
import type { PodList } from "./pods";

const runId = Date.now().toString(36);
const rbacName = `ring0-wl-test-${runId}`;
const rbac = "rbac.authorization.k8s.io/v1";

let conn: ClusterConnection;
let users: Record<DemoKey, SessionUser>;
let namespace: string;
let removeNamespace: () => Promise<void>;
const globexState: ControlPlaneLookup = {
  state: "unavailable",
  phase: "Provisioning",
  message: "etcd is starting",
};

const caller = (user: SessionUser) => testCaller(user, getDb(), `req-${runId}`);

beforeAll(async () => {
  setDatabaseUrl(await testDatabaseUrl());
  users = await seedDemoUsers(getDb());
  conn = testSuperCluster();
  setSuperCluster(conn);
  setControlPlaneDirectory({
    async lookup(tenant) {
      if (tenant === "acme") return { state: "ready", access: superClusterAccess(conn), version: "1.36" };
      if (tenant === "globex") return globexState;
      return { state: "absent" };
    },
  });
  [namespace, removeNamespace] = await testNamespace(conn, "wlt");
  // acme's admins may see namespaces, and pods and events in the test namespace only; members nothing.
  await createObject(conn, {
    apiVersion: rbac,
    kind: "ClusterRole",
    metadata: { name: rbacName },
    rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list"] }],
  });
  await createObject(conn, {
    apiVersion: rbac,
    kind: "ClusterRoleBinding",
    metadata: { name: rbacName },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: rbacName },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "ring0:tenant:acme:admins" }],
  });
  await createObject(conn, {
    apiVersion: rbac,
    kind: "Role",
    metadata: { name: "pod-reader", namespace },
    rules: [{ apiGroups: [""], resources: ["pods", "events"], verbs: ["get", "list", "watch"] }],
  });
  await createObject(conn, {
    apiVersion: rbac,
    kind: "RoleBinding",
    metadata: { name: "pod-reader", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pod-reader" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "ring0:tenant:acme:admins" }],
  });
  await createObject(conn, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace },
    spec: { containers: [{ name: "app", image: "registry.invalid/web:1" }] },
  });
  await createObject(conn, {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `web.${runId}`, namespace },
    involvedObject: { kind: "Pod", name: "web", namespace, apiVersion: "v1" },
    reason: "Tested",
    message: "an event of the test pod",
    type: "Normal",
    count: 1,
    source: { component: "workloads-test" },
    firstTimestamp: new Date().toISOString(),
    lastTimestamp: new Date().toISOString(),
  });
}, 60_000);

afterAll(async () => {
  setControlPlaneDirectory(null);
  for (const kind of ["ClusterRoleBinding", "ClusterRole"])
    await deleteObject(conn, { apiVersion: rbac, kind, metadata: { name: rbacName } }).catch(() => undefined);
  await removeNamespace?.().catch(() => undefined);
  setSuperCluster(null);
  await disconnectDb();
}, 60_000);

describe("workloads.pods, acting as the user in the tenant's control plane", () => {
  it("lists the pods the admin may see, per namespace and across those RBAC allows", async () => {
    const admin = caller(users.acmeAdmin);
    const inNamespace = await admin.workloads.pods.list({ tenant: "acme", namespace });
    expect(inNamespace).toMatchObject({
      state: "serving",
      pods: [{ namespace, name: "web", restarts: 0, refused: null }],
    });
    // No cluster-wide pod list for the admin: namespace by namespace, keeping only what RBAC allows.
    const all = await admin.workloads.pods.list({ tenant: "acme" });
    expect(all.state).toBe("serving");
    if (all.state !== "serving") return;
    const names = all.pods.map((pod) => `${pod.namespace}/${pod.name}`);
    expect(names).toContain(`${namespace}/web`);
    expect(names.filter((name) => name.startsWith("kube-system/"))).toEqual([]);
  });

  it("re-lists live and yields the list when it changes", async () => {
    const feed = await caller(users.acmeAdmin).workloads.pods.watch({ tenant: "acme", namespace });
    const iterator = feed[Symbol.asyncIterator]();
    try {
      const first = (await iterator.next()).value;
      expect(first).toMatchObject({ state: "serving", pods: [{ name: "web" }] });
      await createObject(conn, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web-2", namespace },
        spec: { containers: [{ name: "app", image: "registry.invalid/web:2" }] },
      });
      const next = await eventually(async () => {
        const value = (await iterator.next()).value as PodList | undefined;
        return value?.state === "serving" && value.pods.some((pod) => pod.name === "web-2")
          ? value
          : undefined;
      });
      expect(next.state === "serving" && next.pods.map((pod) => pod.name)).toEqual(["web", "web-2"]);
    } finally {
      await iterator.return?.();
    }
  });

  it("shows one pod with its containers, conditions and events", async () => {
    const view = await caller(users.acmeAdmin).workloads.pods.get({ tenant: "acme", namespace, name: "web" });
    expect(view.state).toBe("serving");
    if (view.state !== "serving") return;
    expect(view.pod).toMatchObject({ name: "web", namespace, refused: null });
    expect(view.pod.containers).toEqual([
      expect.objectContaining({ name: "app", image: "registry.invalid/web:1", restarts: 0 }),
    ]);
    expect(view.events.state).toBe("listed");
    if (view.events.state !== "listed") return;
    expect(view.events.items).toContainEqual(
      expect.objectContaining({
        reason: "Tested",
        message: "an event of the test pod",
        source: "workloads-test",
      }),
    );
    expect(
      await trpcOutcome(
        caller(users.acmeAdmin).workloads.pods.get({ tenant: "acme", namespace, name: "nonexistent" }),
      ),
    ).toEqual(["NOT_FOUND", expect.stringContaining("nonexistent")]);
  });

  it("passes a member's refusal on as the API's 403", async () => {
    const member = caller(users.acmeMember);
    for (const call of [
      member.workloads.pods.list({ tenant: "acme" }),
      member.workloads.pods.list({ tenant: "acme", namespace }),
      member.workloads.pods.get({ tenant: "acme", namespace, name: "web" }),
    ]) {
      const [code, message] = await trpcOutcome(call);
      expect(code).toBe("FORBIDDEN");
      expect(message).toContain('User "acme:acme-member" cannot');
    }
  });

  it("answers another tenant's user NOT_FOUND", async () => {
    const globex = caller(users.globexAdmin);
    for (const call of [
      globex.workloads.pods.list({ tenant: "acme" }),
      globex.workloads.pods.get({ tenant: "acme", namespace, name: "web" }),
    ])
      expect(await trpcOutcome(call)).toEqual(["NOT_FOUND", 'Tenant "acme" was not found.']);
  });

  it("says which phase a control plane that is not serving is in", async () => {
    const globex = caller(users.globexAdmin);
    const notServing = {
      state: "not-serving",
      phase: "Provisioning",
      message: 'The control plane of tenant "globex" is Provisioning: etcd is starting',
    };
    expect(await globex.workloads.pods.list({ tenant: "globex" })).toEqual(notServing);
    expect(await globex.workloads.pods.get({ tenant: "globex", namespace: "default", name: "web" })).toEqual(
      notServing,
    );
  });

  it("validates inputs with messages that name the field", async () => {
    const admin = caller(users.acmeAdmin);
    const [code, message] = await trpcOutcome(
      admin.workloads.pods.get({ tenant: "acme", namespace: "Bad_NS", name: "web" }),
    );
    expect(code).toBe("BAD_REQUEST");
    expect(message).toContain("namespace: expected a DNS-1123 label");
    expect(
      (await trpcOutcome(admin.workloads.pods.get({ tenant: "acme", namespace, name: "" })))[1],
    ).toContain("name: expected a pod name");
  });
});
