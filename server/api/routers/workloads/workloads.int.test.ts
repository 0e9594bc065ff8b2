/**
 * The portal's workloads procedures against a real API server: the run's local super cluster
 * stands in for acme's control plane (as in control-plane.int.test.ts), and every read acts as
 * the signed-in user, so RBAC granted here decides.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb, setDatabaseUrl } from "@/server/db/client";
import { controlPlaneWatchTransport } from "@/server/impersonation/as-user";
import { createObject, deleteObject, readObject } from "@/server/k8s/apply";
import { type ClusterConnection, setSuperCluster } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { eventually, testNamespace, testSuperCluster } from "@/server/k8s/test-cluster";
import { openWatchCount, type WatchTransport } from "@/server/k8s/watch";
import { createLogger } from "@/server/logger";
import { specHash } from "@/server/sharing/grants";
import {
  ownerLabel,
  type SharingSpec,
  sharingAnnotations,
  sharingApiVersion,
  sharingKind,
} from "@/server/sharing/types";
import { type ControlPlaneLookup, setControlPlaneDirectory } from "@/server/tenants/control-planes";
import { watchPods } from "@/server/workloads/pod-feed";
import type { PodList } from "@/server/workloads/pods";
import { superClusterAccess } from "@/test/integration/control-plane-access";
import { testDatabaseUrl } from "@/test/integration/database";
import { type DemoKey, seedDemoUsers, testCaller, trpcOutcome } from "@/test/integration/trpc";

const runId = Date.now().toString(36);
const rbacName = `ring0-wl-test-${runId}`;
const rbac = "rbac.authorization.k8s.io/v1";
/** A tenant of this suite only that shares with acme; its control plane is not serving. */
const sharingOwner = `wls-${runId}`;
const sharingGrant = `${sharingOwner}.acme`;

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
  // Another tenant's user is decided by the sharing grants: Ring0's CRDs are installed at start.
  await installCrds(conn, createLogger({}, "error"));
  setControlPlaneDirectory({
    async lookup(tenant) {
      if (tenant === "acme") return { state: "ready", access: superClusterAccess(conn), version: "1.36" };
      if (tenant === "globex" || tenant === sharingOwner) return globexState;
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
  await deleteObject(conn, {
    apiVersion: sharingApiVersion,
    kind: sharingKind,
    metadata: { name: sharingGrant },
  }).catch(() => undefined);
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

  it("watches: a pod created after subscribing arrives by the watch, not by another list", async () => {
    // The real transport as the admin, recording each call and event, so the order proves the path.
    const log: string[] = [];
    const real = controlPlaneWatchTransport("acme", users.acmeAdmin);
    const transport: WatchTransport = {
      list: (path, query, signal) => {
        log.push("list");
        return real.list(path, query, signal);
      },
      watch: (path, query, onEvent, signal) => {
        log.push("watch");
        return real.watch(
          path,
          query,
          (event) => {
            const name = (event.object as { metadata?: { name?: string } }).metadata?.name;
            log.push(`${event.type} ${name ?? ""}`);
            onEvent(event);
          },
          signal,
        );
      },
    };
    const feed = watchPods({ user: users.acmeAdmin, tenant: "acme" }, namespace, undefined, { transport });
    const names = (list: PodList | undefined) =>
      list?.state === "serving" ? list.pods.map((pod) => pod.name).join(",") : list?.state;
    try {
      const first = (await feed.next()).value as PodList;
      log.push(`snapshot ${names(first)}`);
      expect(log.filter((entry) => entry !== "watch")).toEqual(["list", "snapshot web"]);
      await createObject(conn, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web-3", namespace },
        spec: { containers: [{ name: "app", image: "registry.invalid/web:3" }] },
      });
      const next = (await feed.next()).value as PodList;
      log.push(`snapshot ${names(next)}`);
      // One list at the start; the new pod came as the open watch's ADDED, then the snapshot with
      // it (the super cluster's scheduler may add MODIFIED events; they are not the point here).
      expect(log.filter((entry) => entry !== "watch" && !entry.startsWith("MODIFIED"))).toEqual([
        "list",
        "snapshot web",
        "ADDED web-3",
        "snapshot web,web-3",
      ]);
      expect(log.filter((entry) => entry === "watch")).toHaveLength(1);
      expect(log.indexOf("watch")).toBeLessThan(log.indexOf("ADDED web-3"));
    } finally {
      await feed.return(undefined);
      // Gone before the next test lists the namespace (a graceful delete lingers as Terminating).
      const web3 = { apiVersion: "v1", kind: "Pod", metadata: { name: "web-3", namespace } };
      await deleteObject(conn, web3, { gracePeriodSeconds: 0 });
      await eventually(async () =>
        (await readObject(conn, web3).catch(() => undefined)) ? undefined : true,
      );
    }
  });

  it("yields the list live through the router and closes its watches when the client leaves", async () => {
    const before = openWatchCount();
    const feed = await caller(users.acmeAdmin).workloads.pods.watch({ tenant: "acme", namespace });
    const iterator = feed[Symbol.asyncIterator]();
    try {
      const first = (await iterator.next()).value;
      expect(first).toMatchObject({ state: "serving", pods: [{ name: "web" }] });
      expect(openWatchCount()).toBe(before + 1);
      await createObject(conn, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web-2", namespace },
        spec: { containers: [{ name: "app", image: "registry.invalid/web:2" }] },
      });
      const next = (await iterator.next()).value as PodList;
      expect(next.state === "serving" && next.pods.map((pod) => pod.name)).toEqual(["web", "web-2"]);
    } finally {
      await iterator.return?.();
    }
    await eventually(async () => (openWatchCount() === before ? true : undefined));
  });

  it("across namespaces without a cluster-wide grant, watches the namespaces RBAC allows", async () => {
    const feed = watchPods({ user: users.acmeAdmin, tenant: "acme" }, undefined, undefined);
    try {
      const first = (await feed.next()).value as PodList;
      expect(first.state).toBe("serving");
      if (first.state !== "serving") return;
      const names = first.pods.map((pod) => `${pod.namespace}/${pod.name}`);
      expect(names).toContain(`${namespace}/web`);
      expect(names.filter((name) => name.startsWith("kube-system/"))).toEqual([]);
    } finally {
      await feed.return(undefined);
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
      () => member.workloads.pods.list({ tenant: "acme" }),
      () => member.workloads.pods.list({ tenant: "acme", namespace }),
      () => member.workloads.pods.get({ tenant: "acme", namespace, name: "web" }),
    ]) {
      const [code, message] = await trpcOutcome(call());
      expect(code).toBe("FORBIDDEN");
      expect(message).toContain('User "acme:acme-member" cannot');
    }
    // The live feed ends with exactly the refusal the list gives (its first read is the same).
    for (const input of [{ tenant: "acme" }, { tenant: "acme", namespace }]) {
      const listed = await trpcOutcome(member.workloads.pods.list(input));
      const feed = (await member.workloads.pods.watch(input))[Symbol.asyncIterator]();
      expect(await trpcOutcome(feed.next())).toEqual(listed);
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
    const feed = (await globex.workloads.pods.watch({ tenant: "globex" }))[Symbol.asyncIterator]();
    try {
      expect((await feed.next()).value).toEqual(notServing);
    } finally {
      await feed.return?.();
    }
  });

  it("tells a grantee only the phase of the owner's control plane that is not serving, not why", async () => {
    const spec: SharingSpec = {
      ownerTenant: sharingOwner,
      grantees: [{ tenant: "acme" }],
      rules: [
        { namespaces: ["shared"], apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
      ],
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      purpose: "workloads suite",
    };
    await createObject(conn, {
      apiVersion: sharingApiVersion,
      kind: sharingKind,
      metadata: {
        name: sharingGrant,
        labels: { [ownerLabel]: sharingOwner },
        annotations: {
          [sharingAnnotations.approvedSpec]: specHash(spec),
          [sharingAnnotations.approvedBy]: "test",
        },
      },
      spec,
    });
    const acme = caller(users.acmeAdmin);
    const input = { tenant: sharingOwner, namespace: "shared" };
    // The live grants come from an informer: the grant counts once it has seen it.
    const answer = await eventually(async () => {
      const [code] = await trpcOutcome(acme.workloads.pods.list(input));
      return code === "NOT_FOUND" ? undefined : acme.workloads.pods.list(input);
    });
    expect(answer).toEqual({
      state: "not-serving",
      phase: "Provisioning",
      message: `The control plane of tenant "${sharingOwner}" is not serving right now (Provisioning); try again later.`,
    });
    expect(JSON.stringify(answer)).not.toContain("etcd is starting");
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
