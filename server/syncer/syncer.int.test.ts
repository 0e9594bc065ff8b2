/**
 * The syncer on real parts: the run's local super cluster (kwok nodes schedule and "run" pods) and
 * two real tenant control planes from the local provisioner. Tenant objects exist in the super
 * cluster so the syncer's Tenant informer sees them; the directory answers with the provisioner's
 * admin access (this suite's own, so tenant controllers of other suites cannot redirect it).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObject, deleteObject, type KubeObject, readObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { installCrds } from "@/server/k8s/crds";
import { listEventsFor } from "@/server/k8s/events";
import { eventually, testSuperCluster } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { createLogger } from "@/server/logger";
import { createLocalProvisioner } from "@/server/provisioners/local";
import type { Provisioner } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import { createConnectionCache } from "@/server/tenants/connections";
import { tenantApiVersion, tenantKind } from "@/server/tenants/tenant-resources";
import { setVnAgentEndpoints, syncAnnotations, syncLabels } from "./contracts";
import { superNamespace } from "./naming";
import { BOUNDARY_LABEL, BOUNDARY_POLICIES, POLICY_MARKERS } from "./network-policies";
import { createSyncer, type Syncer } from "./syncer";
import {
  type Obj,
  provisionerDirectory,
  readOrUndefined,
  ref,
  removeTenant,
  startTenants,
} from "./test-world";
import { syncHashAnnotation } from "./translate";
import { isolationConditionType } from "./upward-status";
import { vNodeLabel } from "./vnode-content";

const logger = createLogger({ service: "syncer-it" }, "error");
const suffix = Date.now().toString(36).slice(-5);
const tenantA = `sy-a-${suffix}`;
const tenantB = `sy-b-${suffix}`;
const ours = new Set([tenantA, tenantB]);
const namespace = "team";

let superCluster: ClusterConnection;
let stateDir: string;
let provisioner: Provisioner;
let connA: ClusterConnection;
let connB: ClusterConnection;
let syncer: Syncer | undefined;
const agentPorts = new Map<string, number>();

const directory = provisionerDirectory(ours, () => provisioner);

function startSyncer(): Syncer {
  const started = createSyncer({
    superCluster,
    directory,
    logger,
    workers: 4,
    patrolIntervalMs: 2_000,
    heartbeatIntervalMs: 2_000,
    tenantRecheckMs: 1_000,
    tenantFilter: (tenant) => ours.has(tenant),
    // NetworkPolicies as the wall between tenants (as where no host wall runs): written here, and
    // enforced by the real nodes' kube-router in the in-cluster suite.
    tenantBoundary: {
      admits: (tenant) => (tenant === tenantA ? [tenantB] : []),
      // kwok gives its pods addresses in 10.0.0.0/24, its default range (checked below).
      podRanges: ["10.0.0.0/24"],
      egressBlock: [],
      egressAllow: [],
    },
  });
  return started;
}

const pod = (name: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace, labels: { app: name } },
  spec: { containers: [{ name: "main", image: "nginx" }], ...spec },
});

async function list<T = Obj>(conn: ClusterConnection, apiPath: string, labelSelector?: string): Promise<T[]> {
  const result = await kubeRequest<{ items: T[] }>(conn, {
    path: apiPath,
    query: labelSelector ? { labelSelector } : {},
    timeoutMs: 15_000,
  });
  return result.items;
}

const superNs = (tenant: string) => superNamespace(tenant, namespace);
const readBelow = (tenant: string, kind: string, name: string) =>
  readOrUndefined(superCluster, ref(kind, name, superNs(tenant)));

async function runningAbove(conn: ClusterConnection, name: string): Promise<Obj> {
  return eventually(async () => {
    const found = await readOrUndefined(conn, ref("Pod", name, namespace));
    return found?.status?.phase === "Running" && found.spec?.nodeName ? found : undefined;
  }, 60_000);
}

beforeAll(async () => {
  superCluster = testSuperCluster();
  await installCrds(superCluster, logger);
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-syncer-it-"));
  provisioner = createLocalProvisioner({ stateDir, logger });
  [connA, connB] = (await startTenants(superCluster, provisioner, [tenantA, tenantB])) as [
    ClusterConnection,
    ClusterConnection,
  ];
  // A vn-agent "serves" every super node at a known port, so vNodes must carry it.
  const nodes = await list<Obj>(superCluster, "/api/v1/nodes");
  setVnAgentEndpoints(
    new Map(
      nodes.map((node, index) => {
        agentPorts.set(node.metadata.name, 20_250 + index);
        return [
          node.metadata.name,
          { node: node.metadata.name, host: "localhost" as const, port: 20_250 + index },
        ];
      }),
    ),
  );
  for (const conn of [connA, connB]) {
    await createObject(conn, ref("Namespace", namespace));
  }
  // Pods are admitted only once the namespace's default service account exists (the control
  // plane's service account controller makes it a moment later; under load, seconds later).
  for (const conn of [connA, connB]) {
    await eventually(() => readOrUndefined(conn, ref("ServiceAccount", "default", namespace)), 60_000);
  }
  syncer = startSyncer();
  await syncer.start();
}, 150_000);

afterAll(async () => {
  await syncer?.stop();
  setVnAgentEndpoints(null);
  for (const tenant of ours) {
    await removeTenant(superCluster, provisioner, tenant);
  }
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
}, 120_000);

describe("the syncer", { timeout: 90_000 }, () => {
  it("runs a tenant pod on the super cluster and reports its status, node and events back", async () => {
    await createObject(connA, {
      ...ref("ConfigMap", "settings", namespace),
      data: { mode: "fast" },
    });
    await createObject(connA, {
      ...ref("Secret", "token", namespace),
      type: "Opaque",
      data: { value: Buffer.from("s3cret").toString("base64") },
    });
    await createObject(connA, ref("ServiceAccount", "builder", namespace));
    const created = await createObject<Obj>(connA, pod("web", { serviceAccountName: "builder" }));

    // Below: the mapped namespace, labelled and annotated, with the pod's copy in it.
    const below = await eventually(async () => {
      const found = await readBelow(tenantA, "Pod", "web");
      return found?.status?.phase === "Running" ? found : undefined;
    }, 60_000);
    const mappedNamespace = await readObject(superCluster, ref("Namespace", superNs(tenantA)));
    expect(mappedNamespace.metadata.labels).toMatchObject({
      [syncLabels.tenant]: tenantA,
      [syncLabels.managed]: "true",
    });
    expect(mappedNamespace.metadata.annotations?.[syncAnnotations.namespace]).toBe(namespace);
    expect(below.metadata.labels).toMatchObject({ app: "web", [syncLabels.tenant]: tenantA });
    expect(below.metadata.annotations).toMatchObject({
      [syncAnnotations.namespace]: namespace,
      [syncAnnotations.name]: "web",
      [syncAnnotations.uid]: created.metadata.uid,
    });
    expect(below.metadata.ownerReferences).toBeUndefined();

    // Above: Running with what the super cluster reports, bound to the super node's name.
    const above = await eventually(async () => {
      const found = await readOrUndefined(connA, ref("Pod", "web", namespace));
      const fresh = await readBelow(tenantA, "Pod", "web");
      return found?.status?.phase === "Running" &&
        found.spec?.nodeName &&
        JSON.stringify(found.status?.conditions) === JSON.stringify(fresh?.status?.conditions)
        ? { found, fresh }
        : undefined;
    }, 60_000);
    expect(above.found.spec?.nodeName).toBe(below.spec?.nodeName);
    expect(above.found.status?.podIP).toBe(above.fresh?.status?.podIP);
    expect(above.found.status?.podIP).toBeTruthy();
    expect(above.found.status?.hostIP).toBe(above.fresh?.status?.hostIP);

    // The vNode: named like the super node, pointing at that node's vn-agent, Ready, with a Lease.
    const nodeName = below.spec?.nodeName ?? "";
    const vNode = await readObject<Obj>(connA, ref("Node", nodeName));
    expect(vNode.metadata.labels?.[vNodeLabel]).toBe("true");
    const vStatus = vNode.status as {
      daemonEndpoints: { kubeletEndpoint: { Port: number } };
      addresses: { type: string; address: string }[];
      capacity: Record<string, string>;
      conditions: { type: string; status: string }[];
    };
    expect(vStatus.daemonEndpoints.kubeletEndpoint.Port).toBe(agentPorts.get(nodeName));
    expect(vStatus.addresses).toEqual([{ type: "Hostname", address: "localhost" }]);
    expect(vStatus.capacity.pods).toBeTruthy();
    expect(vStatus.conditions.find((condition) => condition.type === "Ready")?.status).toBe("True");
    const lease = await readObject<Obj>(
      connA,
      ref("Lease", nodeName, "kube-node-lease", "coordination.k8s.io/v1"),
    );
    expect((lease.spec as { holderIdentity: string }).holderIdentity).toBe(nodeName);

    // ConfigMap, Secret and ServiceAccount copied as data.
    const configMap = await eventually(() => readBelow(tenantA, "ConfigMap", "settings"));
    expect(configMap.data).toEqual({ mode: "fast" });
    const secret = await eventually(() => readBelow(tenantA, "Secret", "token"));
    expect(Buffer.from(secret.data?.value ?? "", "base64").toString()).toBe("s3cret");
    expect(await readBelow(tenantA, "ServiceAccount", "builder")).toBeDefined();

    // Events below (the super scheduler's) show up in the tenant, about the tenant's pod.
    const events = await eventually(async () => {
      const found = await listEventsFor(connA, { kind: "Pod", name: "web", namespace });
      return found.some((event) => event.reason === "Scheduled") ? found : undefined;
    });
    const scheduled = events.find((event) => event.reason === "Scheduled");
    expect(scheduled?.message).not.toContain(superNs(tenantA));
  });

  it("never lets a privileged pod reach the super cluster, and tells the tenant why", async () => {
    await createObject(
      connA,
      pod("root", { containers: [{ name: "main", image: "nginx", securityContext: { privileged: true } }] }),
    );
    const refused = await eventually(async () => {
      const found = await readOrUndefined(connA, ref("Pod", "root", namespace));
      const conditions = (found?.status?.conditions ?? []) as {
        type: string;
        status: string;
        reason: string;
        message: string;
      }[];
      return conditions.find((condition) => condition.type === isolationConditionType);
    });
    expect(refused).toMatchObject({ status: "False", reason: "IsolationViolation" });
    expect(refused.message).toContain("privileged");
    const events = await eventually(async () => {
      const found = await listEventsFor(connA, { kind: "Pod", name: "root", namespace });
      return found.some((event) => event.reason === "IsolationViolation") ? found : undefined;
    });
    expect(events.find((event) => event.reason === "IsolationViolation")?.type).toBe("Warning");
    await syncer?.patrol();
    expect(await readBelow(tenantA, "Pod", "root")).toBeUndefined();
    await deleteObject(connA, ref("Pod", "root", namespace));
  });

  it("adds the tenant's ephemeral containers below, checked as new containers, and resizes in place", async () => {
    await createObject(
      connA,
      pod("debugged", {
        containers: [
          {
            name: "main",
            image: "nginx",
            resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "200m", memory: "64Mi" } },
          },
        ],
      }),
    );
    await runningAbove(connA, "debugged");
    const podPath = `/api/v1/namespaces/${namespace}/pods/debugged`;
    const debuggerContainer = { name: "debugger", image: "busybox", stdin: true, tty: true };
    await kubeRequest(connA, {
      method: "PATCH",
      path: `${podPath}/ephemeralcontainers`,
      contentType: "application/strategic-merge-patch+json",
      body: { spec: { ephemeralContainers: [debuggerContainer] } },
    });
    const below = await eventually(async () => {
      const found = await readBelow(tenantA, "Pod", "debugged");
      const names = ((found?.spec?.ephemeralContainers ?? []) as { name: string }[]).map((c) => c.name);
      return names.includes("debugger") ? found : undefined;
    });
    expect(below.spec?.ephemeralContainers).toHaveLength(1);
    // A privileged one is the tenant's to write in its control plane, never run below.
    await kubeRequest(connA, {
      method: "PATCH",
      path: `${podPath}/ephemeralcontainers`,
      contentType: "application/strategic-merge-patch+json",
      body: {
        spec: {
          ephemeralContainers: [{ name: "root", image: "busybox", securityContext: { privileged: true } }],
        },
      },
    });
    const refused = await eventually(async () => {
      const found = await readOrUndefined(connA, ref("Pod", "debugged", namespace));
      const conditions = (found?.status?.conditions ?? []) as { type: string; message: string }[];
      return conditions.find((condition) => condition.type === isolationConditionType);
    });
    expect(refused.message).toContain("privileged");
    await syncer?.patrol();
    // Told once, and the condition stays (copying the status up must not wipe it to be re-added).
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const told = (await listEventsFor(connA, { kind: "Pod", name: "debugged", namespace })).filter(
      (event) => event.reason === "IsolationViolation",
    );
    expect(told.reduce((sum, event) => sum + (event.count ?? 1), 0)).toBe(1);
    const still = await readOrUndefined(connA, ref("Pod", "debugged", namespace));
    expect(
      ((still?.status?.conditions ?? []) as { type: string }[]).some(
        (condition) => condition.type === isolationConditionType,
      ),
    ).toBe(true);
    const names = (
      ((await readBelow(tenantA, "Pod", "debugged"))?.spec?.ephemeralContainers ?? []) as {
        name: string;
      }[]
    ).map((container) => container.name);
    expect(names).toEqual(["debugger"]);

    await deleteObject(connA, ref("Pod", "debugged", namespace));

    // In-place resize: the tenant's new resources reach the copy below through pods/resize. (A
    // simulated node reports no container resources, so API servers take a resize only of a pod
    // with no running container: this one waits for a node that does not exist.)
    await createObject(
      connA,
      pod("resized", {
        nodeSelector: { "example.com/no-such-node": "true" },
        containers: [
          {
            name: "main",
            image: "nginx",
            resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "200m", memory: "64Mi" } },
          },
        ],
      }),
    );
    await eventually(() => readBelow(tenantA, "Pod", "resized"));
    await kubeRequest(connA, {
      method: "PATCH",
      path: `/api/v1/namespaces/${namespace}/pods/resized/resize`,
      contentType: "application/strategic-merge-patch+json",
      body: {
        spec: {
          containers: [{ name: "main", resources: { requests: { cpu: "150m" }, limits: { cpu: "300m" } } }],
        },
      },
    });
    const resized = await eventually(async () => {
      const found = await readBelow(tenantA, "Pod", "resized");
      const main = (
        (found?.spec?.containers ?? []) as { name: string; resources?: { limits?: { cpu?: string } } }[]
      ).find((container) => container.name === "main");
      return main?.resources?.limits?.cpu === "300m" ? main : undefined;
    });
    expect(resized.resources).toMatchObject({ requests: { cpu: "150m", memory: "64Mi" } });
    await deleteObject(connA, ref("Pod", "resized", namespace));
  });

  it("deletes below what the tenant deletes, and marks the tenant pod Evicted when it goes below", async () => {
    await createObject(connA, pod("short"));
    await createObject(connA, pod("evicted"));
    await runningAbove(connA, "short");
    const evicted = await runningAbove(connA, "evicted");

    await deleteObject(connA, ref("Pod", "short", namespace));
    await eventually(async () => (await readBelow(tenantA, "Pod", "short")) === undefined);
    // No kubelet in the tenant: the syncer finishes the graceful deletion.
    await eventually(
      async () => (await readOrUndefined(connA, ref("Pod", "short", namespace))) === undefined,
    );

    await deleteObject(superCluster, ref("Pod", "evicted", superNs(tenantA)), { gracePeriodSeconds: 0 });
    const failed = await eventually(async () => {
      const found = await readOrUndefined(connA, ref("Pod", "evicted", namespace));
      return found?.status?.phase === "Failed" ? found : undefined;
    });
    expect(failed.status?.reason).toBe("Evicted");
    expect(failed.spec?.nodeName).toBe(evicted.spec?.nodeName);
    // It stays Failed: the syncer does not resurrect a bound pod on another node.
    await syncer?.patrol();
    expect(await readBelow(tenantA, "Pod", "evicted")).toBeUndefined();
    await deleteObject(connA, ref("Pod", "evicted", namespace));
    await eventually(
      async () => (await readOrUndefined(connA, ref("Pod", "evicted", namespace))) === undefined,
    );
  });

  it("repairs drift: a pod and a config map deleted below come back, an orphan below goes", async () => {
    // Unschedulable below (no node has the label), so it stays unbound and is re-created when lost.
    await createObject(connA, pod("waiting", { nodeSelector: { "ring0.dev/no-such-node": "true" } }));
    await eventually(() => readBelow(tenantA, "Pod", "waiting"));
    await deleteObject(superCluster, ref("Pod", "waiting", superNs(tenantA)), { gracePeriodSeconds: 0 });
    await deleteObject(superCluster, ref("ConfigMap", "settings", superNs(tenantA)));
    await createObject(superCluster, {
      ...ref("Pod", "orphan", superNs(tenantA)),
      metadata: {
        name: "orphan",
        namespace: superNs(tenantA),
        labels: { [syncLabels.tenant]: tenantA, [syncLabels.managed]: "true" },
        annotations: { [syncAnnotations.namespace]: namespace, [syncAnnotations.name]: "orphan" },
      },
      spec: { containers: [{ name: "main", image: "nginx" }] },
    });
    await syncer?.patrol();
    await eventually(async () => {
      const [waiting, settings, orphan] = await Promise.all([
        readBelow(tenantA, "Pod", "waiting"),
        readBelow(tenantA, "ConfigMap", "settings"),
        readBelow(tenantA, "Pod", "orphan"),
      ]);
      return waiting && !waiting.metadata.deletionTimestamp && settings && !orphan;
    }, 30_000);
    const stats = syncer?.stats();
    expect(stats?.patrol[tenantA]?.pod?.checked).toBeGreaterThan(0);
    expect(stats?.patrol[tenantA]?.configmap?.checked).toBeGreaterThan(0);
    expect(stats?.queue[tenantA]).toMatchObject({ paused: false });
    await deleteObject(connA, ref("Pod", "waiting", namespace));
  });

  it("weighs each tenant's queue by its Tenant's spec.syncer.weight", async () => {
    await kubeRequest(superCluster, {
      method: "PATCH",
      path: `/apis/${tenantApiVersion}/tenants/${tenantA}`,
      contentType: "application/merge-patch+json",
      body: { spec: { syncer: { weight: 30 } } },
    });
    await eventually(() => syncer?.stats().queue[tenantA]?.weight === 30);
    expect(syncer?.stats().queue[tenantB]?.weight).toBe(10);
  });

  it("shows a second tenant none of the first's objects", async () => {
    await createObject(connB, pod("web"));
    const own = await runningAbove(connB, "web");
    const [podsA, podsB] = await Promise.all([
      readBelow(tenantA, "Pod", "web"),
      readBelow(tenantB, "Pod", "web"),
    ]);
    expect(podsA?.metadata.annotations?.[syncAnnotations.uid]).not.toBe(own.metadata.uid);
    expect(podsB?.metadata.annotations?.[syncAnnotations.uid]).toBe(own.metadata.uid);
    expect(superNs(tenantA)).not.toBe(superNs(tenantB));
    // B's control plane holds only B's pod, B's vNode, and none of A's config.
    const pods = await list(connB, "/api/v1/pods");
    expect(pods.map((item) => item.metadata.name)).toEqual(["web"]);
    const vNodes = await list(connB, "/api/v1/nodes");
    expect(vNodes.map((node) => node.metadata.name)).toEqual([own.spec?.nodeName]);
    expect(await readOrUndefined(connB, ref("ConfigMap", "settings", namespace))).toBeUndefined();
    await deleteObject(connB, ref("Pod", "web", namespace));
    // The last pod leaving its node takes the vNode with it.
    await eventually(async () => (await list(connB, "/api/v1/nodes")).length === 0);
  });

  it("gives a service's copy the tenant's cluster IP (or says which it has) and copies endpoints of selector-less services", async () => {
    const service = await createObject<Obj>(connA, {
      ...ref("Service", "api", namespace),
      spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    await createObject(connA, {
      ...ref("Service", "external", namespace),
      spec: { ports: [{ port: 5432 }] },
    });
    await createObject(connA, {
      ...ref("Endpoints", "external", namespace),
      subsets: [{ addresses: [{ ip: "10.244.255.10" }], ports: [{ port: 5432 }] }],
    });
    const below = await eventually(() => readBelow(tenantA, "Service", "api"));
    expect(below.spec?.clusterIP).toBeTruthy();
    expect(below.spec?.selector).toEqual({ app: "web" });
    const stillOwn = await readObject<Obj>(connA, ref("Service", "api", namespace));
    expect(stillOwn.spec?.clusterIP).toBe(service.spec?.clusterIP);
    if (below.spec?.clusterIP !== service.spec?.clusterIP) {
      // Taken below by another service of this shared cluster: the tenant is told which one it has.
      const events = await eventually(async () => {
        const found = await list(connA, `/api/v1/namespaces/${namespace}/events`);
        return found.find((event) => (event as { reason?: string }).reason === "ClusterIPDiffers");
      });
      expect(JSON.stringify(events)).toContain(String(below.spec?.clusterIP));
    }
    const endpoints = await eventually(() => readBelow(tenantA, "Endpoints", "external"));
    expect(endpoints.subsets).toEqual([
      { addresses: [{ ip: "10.244.255.10" }], ports: [{ port: 5432, protocol: "TCP" }] },
    ]);
    // The selector's endpoints below are the super cluster's own, never a copy of the tenant's.
    const selected = await readBelow(tenantA, "Endpoints", "api");
    expect(selected?.metadata.annotations?.[syncHashAnnotation]).toBeUndefined();
    // …and the patroller leaves them alone (they carry the service's labels, not the syncer's hash).
    const before = await eventually(() => readBelow(tenantA, "Endpoints", "api"));
    await syncer?.patrol();
    await eventually(() => syncer?.stats().queue[tenantA]?.depth === 0);
    expect((await readBelow(tenantA, "Endpoints", "api"))?.metadata.uid).toBe(before.metadata.uid);
  });

  it("copies the load balancer the super cluster reports for a service up to the tenant", async () => {
    await createObject(connA, {
      ...ref("Service", "public", namespace),
      spec: { type: "LoadBalancer", selector: { app: "web" }, ports: [{ port: 443 }] },
    });
    await eventually(() => readBelow(tenantA, "Service", "public"));
    // A load balancer controller in the super cluster (none runs in kwok's) gives it an address.
    const setBelow = (ingress: unknown[]) =>
      kubeRequest(superCluster, {
        method: "PATCH",
        path: `/api/v1/namespaces/${superNs(tenantA)}/services/public/status`,
        contentType: "application/merge-patch+json",
        body: { status: { loadBalancer: { ingress } } },
      });
    // Addresses only: the API server adds defaults (ipMode) to each entry, on both sides alike.
    const ingressAbove = async () => {
      const found = await readOrUndefined(connA, ref("Service", "public", namespace));
      const ingress = (found?.status?.loadBalancer as { ingress?: { ip?: string; hostname?: string }[] })
        ?.ingress;
      return ingress?.map((entry) => entry.ip ?? entry.hostname).join(",") ?? "";
    };
    await setBelow([{ ip: "192.0.2.50" }]);
    await eventually(async () => (await ingressAbove()) === "192.0.2.50");
    // A change below follows, and a removed load balancer is removed above.
    await setBelow([{ hostname: "lb.example.com" }]);
    await eventually(async () => (await ingressAbove()) === "lb.example.com");
    await setBelow([]);
    await eventually(async () => (await ingressAbove()) === "");
    // The tenant's spec was never touched by the copy.
    const above = await readObject<Obj>(connA, ref("Service", "public", namespace));
    expect(above.spec?.type).toBe("LoadBalancer");
    await deleteObject(connA, ref("Service", "public", namespace));
    await eventually(async () => (await readBelow(tenantA, "Service", "public")) === undefined);
  });

  it("refuses a huge object with a Warning event and keeps syncing the others", async () => {
    await createObject(connA, {
      ...ref("ConfigMap", "huge", namespace),
      data: { blob: "x".repeat(600 * 1024) },
    });
    await createObject(connA, { ...ref("ConfigMap", "small", namespace), data: { a: "1" } });
    await eventually(() => readBelow(tenantA, "ConfigMap", "small"));
    const events = await eventually(async () => {
      const found = await listEventsFor(connA, { kind: "ConfigMap", name: "huge", namespace });
      return found.some((event) => event.reason === "SyncRefused") ? found : undefined;
    });
    expect(events.find((event) => event.reason === "SyncRefused")?.type).toBe("Warning");
    expect(await readBelow(tenantA, "ConfigMap", "huge")).toBeUndefined();
    await deleteObject(connA, ref("ConfigMap", "huge", namespace));
  });

  it("fences each namespace below with NetworkPolicies: Ring0's three kept, pods marked by the tenant's policies, reserved names refused", async () => {
    // Read as stored (client-node's typed model would drop `from`).
    const policyBelow = (name: string) =>
      kubeRequest<Obj>(superCluster, {
        path: `/apis/networking.k8s.io/v1/namespaces/${superNs(tenantA)}/networkpolicies/${name}`,
      }).catch(() => undefined);
    const policies = await eventually(async () => {
      const found = await Promise.all(Object.values(BOUNDARY_POLICIES).map(policyBelow));
      return found.every(Boolean) ? (found as Obj[]) : undefined;
    });
    for (const policy of policies) expect(policy.metadata.labels?.[BOUNDARY_LABEL]).toBe(tenantA);
    // The operator lets tenant B's pods reach A's.
    expect(JSON.stringify(policies[1]?.spec)).toContain(`"${syncLabels.tenant}":"${tenantB}"`);

    // A tenant policy that selects a pod marks it below; gone, the mark goes too.
    await createObject(connA, pod("guarded"));
    await createObject(connA, {
      ...ref("NetworkPolicy", "guard", namespace, "networking.k8s.io/v1"),
      spec: { podSelector: { matchLabels: { app: "guarded" } }, ingress: [{}] },
    });
    const marks = async () => (await readBelow(tenantA, "Pod", "guarded"))?.metadata.labels ?? {};
    await eventually(async () => ((await marks())[POLICY_MARKERS.ingress] === "true" ? true : undefined));
    expect((await marks())[POLICY_MARKERS.egress]).toBeUndefined();
    // "From anywhere" below is the tenant's own pods, its API servers and the tenants let in.
    const guard = await eventually(() => policyBelow("guard"));
    const from = (policy: Obj | undefined) =>
      (policy?.spec?.ingress as { from?: unknown[] }[] | undefined)?.[0]?.from;
    expect(from(guard)).toEqual(from(policies[1]));
    expect(from(guard)).toHaveLength(3);
    await deleteObject(connA, ref("NetworkPolicy", "guard", namespace, "networking.k8s.io/v1"));
    await eventually(async () => ((await marks())[POLICY_MARKERS.ingress] === undefined ? true : undefined));

    // A tenant policy named as Ring0's: refused in the tenant, Ring0's left as it was.
    await createObject(connA, {
      ...ref("NetworkPolicy", BOUNDARY_POLICIES.floor, namespace, "networking.k8s.io/v1"),
      spec: { podSelector: {}, ingress: [{}], egress: [{}] },
    });
    await eventually(async () => {
      const found = await listEventsFor(connA, {
        kind: "NetworkPolicy",
        name: BOUNDARY_POLICIES.floor,
        namespace,
      });
      return found.some((event) => event.reason === "SyncRefused") ? true : undefined;
    });
    const floor = await policyBelow(BOUNDARY_POLICIES.floor);
    expect(floor?.metadata.labels?.[syncLabels.managed]).toBeUndefined();
    // Out only to the cluster's DNS.
    expect(floor?.spec).toMatchObject({ policyTypes: ["Ingress", "Egress"] });
    const floorEgress = floor?.spec?.egress as { to: unknown[] }[] | undefined;
    expect(floorEgress).toHaveLength(1);
    expect(JSON.stringify(floorEgress)).toContain('"k8s-app":"kube-dns"');

    // Changed or removed below by anyone else: written back.
    await deleteObject(
      superCluster,
      ref("NetworkPolicy", BOUNDARY_POLICIES.ingress, superNs(tenantA), "networking.k8s.io/v1"),
    );
    await eventually(async () => {
      const back = await policyBelow(BOUNDARY_POLICIES.ingress);
      return back && !back.metadata.deletionTimestamp ? true : undefined;
    });
    await deleteObject(
      connA,
      ref("NetworkPolicy", BOUNDARY_POLICIES.floor, namespace, "networking.k8s.io/v1"),
    );

    // A selector-less Service's Endpoints below name the tenant's own pods, never another tenant's.
    await createObject(connB, pod("target"));
    const [own, other] = await Promise.all([runningAbove(connA, "guarded"), runningAbove(connB, "target")]);
    const ownIp = String(own.status?.podIP);
    const otherIp = String(other.status?.podIP);
    expect(otherIp.startsWith("10.0.0.")).toBe(true); // inside this suite's pod ranges
    await createObject(connA, {
      ...ref("Service", "sideways", namespace),
      spec: { ports: [{ port: 80 }] },
    });
    await createObject(connA, {
      ...ref("Endpoints", "sideways", namespace),
      subsets: [{ addresses: [{ ip: otherIp }, { ip: ownIp }], ports: [{ port: 80 }] }],
    });
    const sideways = await eventually(async () => {
      const found = await readBelow(tenantA, "Endpoints", "sideways");
      return found?.metadata.annotations?.[syncHashAnnotation] ? found : undefined;
    });
    expect(JSON.stringify(sideways)).not.toContain(`"${otherIp}"`);
    expect((sideways as { subsets?: unknown }).subsets).toEqual([
      { addresses: [{ ip: ownIp }], ports: [{ port: 80, protocol: "TCP" }] },
    ]);
    await deleteObject(connA, ref("Service", "sideways", namespace));
    await deleteObject(connB, ref("Pod", "target", namespace), { gracePeriodSeconds: 0 });
    await deleteObject(connA, ref("Pod", "guarded", namespace), { gracePeriodSeconds: 0 });
    await eventually(async () => ((await readBelow(tenantA, "Pod", "guarded")) ? undefined : true));
  });

  it("pauses only the tenant whose control plane goes away, and resumes it when it is back", async () => {
    const version = availableVersions()[0] ?? "";
    await provisioner.ensure({ tenant: tenantB, version, suspended: true });
    await eventually(async () => (await provisioner.observe(tenantB)).phase === "Stopped", 60_000);
    await eventually(() => syncer?.stats().queue[tenantB]?.paused === true, 30_000);
    // A keeps syncing meanwhile.
    await createObject(connA, pod("meanwhile"));
    await runningAbove(connA, "meanwhile");
    expect(syncer?.stats().queue[tenantA]?.paused).toBe(false);
    await deleteObject(connA, ref("Pod", "meanwhile", namespace));

    await provisioner.ensure({ tenant: tenantB, version, suspended: false });
    await eventually(async () => (await provisioner.observe(tenantB)).phase === "Running", 60_000);
    const access = await provisioner.access(tenantB);
    if (!access) throw new Error("no access to the resumed tenant");
    connB = createConnectionCache().connectionFor(tenantB, access);
    await eventually(() => syncer?.stats().queue[tenantB]?.paused === false, 30_000);
    await createObject(connB, pod("back"));
    await runningAbove(connB, "back");
  }, 150_000);

  it("cascades a tenant namespace deletion below", async () => {
    await createObject(connB, ref("Namespace", "doomed"));
    // The namespace's default service account comes from the tenant's controller manager, a moment later.
    await eventually(() =>
      // No grace period: the tenant's namespace controller waits that long before it looks again.
      createObject(connB, {
        ...pod("inside", { terminationGracePeriodSeconds: 0 }),
        metadata: { name: "inside", namespace: "doomed" },
      }),
    );
    await eventually(() =>
      readOrUndefined(superCluster, ref("Pod", "inside", superNamespace(tenantB, "doomed"))),
    );
    await deleteObject(connB, ref("Namespace", "doomed"));
    await eventually(
      async () =>
        (await readOrUndefined(superCluster, ref("Namespace", superNamespace(tenantB, "doomed")))) ===
        undefined,
      60_000,
    );
    // The tenant's own namespace finishes too: the syncer completes its pods' deletion.
    await eventually(
      async () => (await readOrUndefined(connB, ref("Namespace", "doomed"))) === undefined,
      60_000,
    );
  }, 120_000);

  it("converges after a restart with no duplicates or orphans", async () => {
    await syncer?.stop();
    // While it is away: a new pod in the tenant, a pod deleted in the tenant, a config map lost below.
    await createObject(connA, pod("later"));
    await deleteObject(connA, ref("Pod", "web", namespace));
    await deleteObject(superCluster, ref("ConfigMap", "settings", superNs(tenantA)));
    syncer = startSyncer();
    await syncer.start();
    await runningAbove(connA, "later");
    await eventually(async () => (await readOrUndefined(connA, ref("Pod", "web", namespace))) === undefined);
    await eventually(() => readBelow(tenantA, "ConfigMap", "settings"));
    const below = await list(superCluster, "/api/v1/pods", `${syncLabels.tenant}=${tenantA}`);
    const above = await list(connA, "/api/v1/pods");
    expect(below.map((item) => item.metadata.name).sort()).toEqual(["later"]);
    expect(above.map((item) => item.metadata.name).sort()).toEqual(["later"]);
    expect(below[0]?.metadata.annotations?.[syncHashAnnotation]).toBeTruthy();
    // Only the node running "later" is a vNode in A.
    const vNodes = await eventually(async () => {
      const found = await list(connA, "/api/v1/nodes");
      return found.length === 1 ? found : undefined;
    });
    expect(vNodes[0]?.metadata.name).toBe(below[0]?.spec?.nodeName);
    await deleteObject(connA, ref("Pod", "later", namespace));
    await eventually(async () => (await list(connA, "/api/v1/nodes")).length === 0);
  });
  it("removes what it synced below for a tenant that is deleted", async () => {
    expect(
      (await list(superCluster, "/api/v1/namespaces", `${syncLabels.tenant}=${tenantB}`)).length,
    ).toBeGreaterThan(0);
    await deleteObject(superCluster, ref(tenantKind, tenantB, undefined, tenantApiVersion));
    await kubeRequest(superCluster, {
      method: "PATCH",
      path: `/apis/${tenantApiVersion}/tenants/${tenantB}`,
      contentType: "application/merge-patch+json",
      body: { metadata: { finalizers: null } },
    }).catch(() => undefined);
    await eventually(async () => {
      const left = await list(superCluster, "/api/v1/namespaces", `${syncLabels.tenant}=${tenantB}`);
      return left.every((item) => item.metadata.deletionTimestamp);
    });
    expect(syncer?.stats().queue[tenantB]).toBeUndefined();
    expect(syncer?.stats().tenants[tenantB]).toBeUndefined();
  });
});
