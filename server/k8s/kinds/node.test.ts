import { describe, expect, it } from "vitest";
import { nodeRoles, podsPerNode, summariseNode, type V1Node, type V1Pod } from "./node";

const node: V1Node = {
  apiVersion: "v1",
  kind: "Node",
  metadata: {
    name: "kwok-node-0",
    creationTimestamp: new Date("2026-01-02T03:04:05Z"),
    labels: {
      "topology.kubernetes.io/zone": "zone-a",
      "node.kubernetes.io/instance-type": "ring0.standard-16",
      "node-role.kubernetes.io/control-plane": "",
      "node-role.kubernetes.io/infra": "",
    },
  },
  spec: { unschedulable: true, taints: [{ key: "dedicated", value: "infra", effect: "NoSchedule" }] },
  status: {
    capacity: { cpu: "16", memory: "64Gi", pods: "110" },
    allocatable: { cpu: "15800m", memory: "63Gi", pods: "110" },
    nodeInfo: { kubeletVersion: "fake" } as NonNullable<V1Node["status"]>["nodeInfo"],
    addresses: [
      { type: "Hostname", address: "localhost" },
      { type: "InternalIP", address: "192.0.2.10" },
    ],
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "KubeletReady",
        message: "kubelet is posting ready status",
        lastTransitionTime: new Date("2026-01-02T03:05:00Z"),
      },
      { type: "MemoryPressure", status: "False" },
    ],
  },
};

describe("summariseNode", () => {
  it("summarises a ready kwok node", () => {
    expect(summariseNode(node, 7)).toEqual({
      name: "kwok-node-0",
      status: "Ready",
      roles: ["control-plane", "infra"],
      zone: "zone-a",
      instanceType: "ring0.standard-16",
      capacity: { cpu: "16", memory: "64Gi", pods: "110" },
      allocatable: { cpu: "15800m", memory: "63Gi", pods: "110" },
      pods: 7,
      createdAt: "2026-01-02T03:04:05.000Z",
      kubeletVersion: "fake",
      unschedulable: true,
      taints: [{ key: "dedicated", value: "infra", effect: "NoSchedule" }],
      labels: node.metadata?.labels,
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          message: "kubelet is posting ready status",
          lastTransitionTime: "2026-01-02T03:05:00.000Z",
        },
        { type: "MemoryPressure", status: "False", reason: "", message: "", lastTransitionTime: "" },
      ],
      addresses: [
        { type: "Hostname", address: "localhost" },
        { type: "InternalIP", address: "192.0.2.10" },
      ],
    });
  });

  it("maps the Ready condition to Ready/NotReady/Unknown", () => {
    const withReady = (status?: string): V1Node => ({
      metadata: { name: "n" },
      status: status ? { conditions: [{ type: "Ready", status }] } : {},
    });
    expect(summariseNode(withReady("True"), 0).status).toBe("Ready");
    expect(summariseNode(withReady("False"), 0).status).toBe("NotReady");
    expect(summariseNode(withReady("Unknown"), 0).status).toBe("Unknown");
    expect(summariseNode(withReady(), 0).status).toBe("Unknown");
  });

  it("defaults a bare node", () => {
    const summary = summariseNode({ metadata: { name: "bare" } }, 0);
    expect(summary).toMatchObject({
      roles: ["worker"],
      zone: null,
      instanceType: null,
      capacity: { cpu: "0", memory: "0", pods: "0" },
      unschedulable: false,
      taints: [],
      createdAt: "",
    });
  });
});

describe("nodeRoles", () => {
  it("ignores the bare prefix and other labels", () => {
    expect(nodeRoles({ "node-role.kubernetes.io/": "", "kubernetes.io/role": "master" })).toEqual(["worker"]);
  });
});

describe("podsPerNode", () => {
  const pod = (nodeName: string | undefined, phase: string): V1Pod => ({
    metadata: { name: `p-${Math.random()}` },
    spec: { containers: [], ...(nodeName ? { nodeName } : {}) },
    status: { phase },
  });

  it("counts non-terminated pods by spec.nodeName", () => {
    const counts = podsPerNode([
      pod("a", "Running"),
      pod("a", "Pending"),
      pod("a", "Succeeded"),
      pod("b", "Failed"),
      pod("b", "Running"),
      pod(undefined, "Pending"),
    ]);
    expect(Object.fromEntries(counts)).toEqual({ a: 2, b: 1 });
  });
});
