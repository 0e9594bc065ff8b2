import { describe, expect, it } from "vitest";
import { syncAnnotations, syncLabels } from "./contracts";
import { superNamespace } from "./naming";
import {
  isSynced,
  malformedReason,
  maxObjectBytes,
  podStatusPatch,
  serviceStatusPatch,
  superObject,
  superPodSpec,
  syncHashOf,
  type TenantObject,
  vNodeContent,
  vNodeStatus,
  withSyncHash,
  writtenBySyncer,
} from "./translate";

const tenantPod: TenantObject = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "web",
    namespace: "team",
    uid: "uid-1",
    labels: { app: "web" },
    annotations: { note: "hi", "kubectl.kubernetes.io/last-applied-configuration": "{}" },
    ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-1", uid: "rs" }],
    finalizers: ["example.com/keep"],
  },
  spec: {
    nodeName: "kwok-node-0",
    serviceAccountName: "builder",
    priorityClassName: "high",
    priority: 1000,
    containers: [
      {
        name: "main",
        image: "nginx",
        volumeMounts: [
          { name: "data", mountPath: "/data" },
          { name: "kube-api-access-abcde", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
        ],
      },
    ],
    volumes: [
      { name: "data", emptyDir: {} },
      {
        name: "kube-api-access-abcde",
        projected: {
          sources: [{ serviceAccountToken: { path: "token" } }, { configMap: { name: "kube-root-ca.crt" } }],
        },
      },
    ],
  },
};

describe("downward translation", () => {
  it("puts a pod in the tenant's super namespace with the sync labels and annotations, without owners or finalizers", () => {
    const copy = superObject("acme", "pod", tenantPod);
    expect(copy.metadata.namespace).toBe(superNamespace("acme", "team"));
    expect(copy.metadata.labels).toEqual({
      app: "web",
      [syncLabels.tenant]: "acme",
      [syncLabels.managed]: "true",
    });
    expect(copy.metadata.annotations).toEqual({
      note: "hi",
      [syncAnnotations.namespace]: "team",
      [syncAnnotations.name]: "web",
      [syncAnnotations.uid]: "uid-1",
    });
    expect(copy.metadata.ownerReferences).toBeUndefined();
    expect(copy.metadata.finalizers).toBeUndefined();
  });

  it("drops the tenant's token volume, its node and its priority class; keeps the rest", () => {
    const spec = superPodSpec(tenantPod.spec ?? {});
    expect(spec.volumes).toEqual([{ name: "data", emptyDir: {} }]);
    expect((spec.containers as { volumeMounts: unknown }[])[0]?.volumeMounts).toEqual([
      { name: "data", mountPath: "/data" },
    ]);
    expect(spec.nodeName).toBeUndefined();
    expect(spec.priorityClassName).toBeUndefined();
    expect(spec.priority).toBeUndefined();
    expect(spec.serviceAccountName).toBe("builder");
  });

  it("merges the operator's placement policy", () => {
    const spec = superPodSpec(
      { containers: [], nodeSelector: { disk: "ssd" }, tolerations: [{ key: "a", operator: "Exists" }] },
      { nodeSelector: { pool: "tenants" }, tolerations: [{ key: "tenants", operator: "Exists" }] },
    );
    expect(spec.nodeSelector).toEqual({ disk: "ssd", pool: "tenants" });
    expect(spec.tolerations).toEqual([
      { key: "a", operator: "Exists" },
      { key: "tenants", operator: "Exists" },
    ]);
  });

  it("lets the super cluster allocate a service's addresses and node ports", () => {
    const copy = superObject("acme", "service", {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "api", namespace: "team" },
      spec: {
        clusterIP: "10.0.0.5",
        clusterIPs: ["10.0.0.5"],
        type: "NodePort",
        ports: [{ port: 80, nodePort: 30080 }],
      },
    });
    expect(copy.spec).toEqual({ type: "NodePort", ports: [{ port: 80 }] });
  });

  it("skips what the super cluster makes for itself, and endpoints of services with a selector", () => {
    const meta = (name: string) => ({ name, namespace: "team" });
    expect(
      isSynced("configmap", { apiVersion: "v1", kind: "ConfigMap", metadata: meta("kube-root-ca.crt") }),
    ).toBe(false);
    expect(
      isSynced("serviceaccount", { apiVersion: "v1", kind: "ServiceAccount", metadata: meta("default") }),
    ).toBe(false);
    expect(
      isSynced("secret", {
        apiVersion: "v1",
        kind: "Secret",
        metadata: meta("t"),
        type: "kubernetes.io/service-account-token",
      }),
    ).toBe(false);
    expect(
      isSynced("namespace", { apiVersion: "v1", kind: "Namespace", metadata: { name: "kube-node-lease" } }),
    ).toBe(false);
    const endpoints = { apiVersion: "v1", kind: "Endpoints", metadata: meta("api") };
    const selected = {
      apiVersion: "v1",
      kind: "Service",
      metadata: meta("api"),
      spec: { selector: { app: "a" } },
    };
    const manual = { apiVersion: "v1", kind: "Service", metadata: meta("api"), spec: {} };
    expect(isSynced("endpoints", endpoints, () => selected)).toBe(false);
    expect(isSynced("endpoints", endpoints, () => manual)).toBe(true);
    expect(isSynced("endpoints", endpoints, () => undefined)).toBe(false);
  });

  it("hashes what it applies, so an unchanged object is recognised", () => {
    const first = withSyncHash(superObject("acme", "pod", tenantPod));
    const again = withSyncHash(superObject("acme", "pod", structuredClone(tenantPod)));
    expect(syncHashOf(first)).toBe(syncHashOf(again));
    const changed = structuredClone(tenantPod);
    (changed.spec as { containers: { image: string }[] }).containers[0]!.image = "nginx:2";
    expect(syncHashOf(withSyncHash(superObject("acme", "pod", changed)))).not.toBe(syncHashOf(first));
    expect(writtenBySyncer("configmap", first, "acme")).toBe(true);
    expect(writtenBySyncer("pod", first, "globex")).toBe(false);
    const controllerMade = { ...first, metadata: { ...first.metadata, annotations: {} } };
    expect(writtenBySyncer("endpoints", controllerMade, "acme")).toBe(false);
  });

  it("refuses huge objects and pods without containers", () => {
    const huge = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "big" },
      data: { x: "y".repeat(maxObjectBytes) },
    };
    expect(malformedReason("configmap", huge)).toMatch(/bytes/);
    expect(malformedReason("pod", { ...tenantPod, spec: { containers: [] } })).toMatch(/no containers/);
    expect(malformedReason("pod", tenantPod)).toBeNull();
  });
});

describe("upward translation", () => {
  it("patches the tenant pod's status to exactly what the super cluster reports", () => {
    const below = {
      phase: "Running",
      podIP: "10.0.0.9",
      podIPs: [{ ip: "10.0.0.9" }],
      hostIP: "10.1.0.1",
      conditions: [{ type: "Ready", status: "True" }],
      qosClass: "BestEffort",
    };
    const above = {
      phase: "Pending",
      conditions: [{ type: "PodScheduled", status: "True" }],
      nominatedNodeName: "x",
    };
    expect(podStatusPatch(above, below)).toEqual({
      phase: "Running",
      podIP: "10.0.0.9",
      podIPs: [{ ip: "10.0.0.9" }],
      hostIP: "10.1.0.1",
      conditions: [{ type: "Ready", status: "True" }],
    });
    expect(podStatusPatch({ ...below }, below)).toBeNull();
    expect(podStatusPatch({ phase: "Running", message: "old" }, { phase: "Running" })).toEqual({
      message: null,
    });
  });

  it("makes a vNode of a super node: capacity, conditions, a localhost address and the vn-agent's port", () => {
    const superNode = {
      metadata: {
        name: "kwok-node-0",
        labels: {
          "kubernetes.io/hostname": "kwok-node-0",
          "topology.kubernetes.io/zone": "zone-a",
          "kwok.x-k8s.io/node": "fake",
        },
      },
      status: {
        capacity: { cpu: "32", pods: "110" },
        allocatable: { cpu: "32", pods: "110" },
        conditions: [
          {
            type: "Ready",
            status: "True",
            lastHeartbeatTime: "2026-01-01T00:00:00Z",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
        nodeInfo: { kubeletVersion: "fake" },
        addresses: [{ type: "InternalIP", address: "10.1.0.1" }],
      },
    };
    const served = vNodeContent(superNode, 20250);
    expect(served.labels).toEqual({
      "ring0.dev/vnode": "true",
      "kubernetes.io/hostname": "kwok-node-0",
      "topology.kubernetes.io/zone": "zone-a",
    });
    expect(served.status.addresses).toEqual([{ type: "Hostname", address: "localhost" }]);
    expect(served.status.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 20250 } });
    expect(served.annotations["ring0.dev/vn-agent"]).toBe("localhost:20250");
    // Heartbeats change every time; they must not change what the syncer compares.
    const later = structuredClone(superNode);
    later.status.conditions[0]!.lastHeartbeatTime = "2026-01-01T00:05:00Z";
    expect(vNodeContent(later, 20250)).toEqual(served);

    const unserved = vNodeContent(superNode, undefined);
    expect(unserved.status.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: 10250 } });
    expect(unserved.annotations["ring0.dev/vn-agent"]).toMatch(/^none: no vn-agent serves node kwok-node-0/);

    const status = vNodeStatus(served.status, "2026-02-02T00:00:00Z") as {
      conditions: { lastHeartbeatTime: string }[];
    };
    expect(status.conditions[0]?.lastHeartbeatTime).toBe("2026-02-02T00:00:00Z");
  });
});

describe("service status upward", () => {
  const balanced = { loadBalancer: { ingress: [{ ip: "192.0.2.50", ipMode: "VIP" }] } };

  it("gives the tenant's service the load balancer reported below", () => {
    expect(serviceStatusPatch({}, balanced)).toEqual(balanced);
    expect(serviceStatusPatch(undefined, balanced)).toEqual(balanced);
  });

  it("replaces a different ingress whole", () => {
    const moved = { loadBalancer: { ingress: [{ hostname: "lb.example.com" }] } };
    expect(serviceStatusPatch(balanced, moved)).toEqual(moved);
  });

  it("removes the tenant's ingress when the super cluster reports none", () => {
    expect(serviceStatusPatch(balanced, { loadBalancer: {} })).toEqual({ loadBalancer: { ingress: null } });
    expect(serviceStatusPatch(balanced, undefined)).toEqual({ loadBalancer: { ingress: null } });
  });

  it("writes nothing when both agree, or neither has a load balancer", () => {
    expect(serviceStatusPatch(balanced, structuredClone(balanced))).toBeNull();
    expect(serviceStatusPatch({}, {})).toBeNull();
    expect(serviceStatusPatch({ loadBalancer: { ingress: [] } }, { loadBalancer: {} })).toBeNull();
  });

  it("copies only the load balancer, never the super cluster's conditions", () => {
    const below = { ...balanced, conditions: [{ type: "Ready", status: "True" }] };
    expect(serviceStatusPatch({}, below)).toEqual(balanced);
  });
});
