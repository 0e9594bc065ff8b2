import { describe, expect, it } from "vitest";
import type { V1Node, V1Pod } from "@/server/k8s/kinds/node";
import { besideKubelet } from "./agent";
import { nodeAgentPods, nodeAgentTls } from "./node-agents";

const owner = [
  { apiVersion: "apps/v1", kind: "DaemonSet", name: "ring0-vn-agent", uid: "u1", controller: true },
];
const agentPod = (
  name: string,
  node: string,
  ip: string,
  ready: boolean,
  extra: Partial<V1Pod> = {},
): V1Pod => ({
  metadata: { name, namespace: "ring0-system", ownerReferences: owner },
  spec: { nodeName: node, containers: [] },
  status: { phase: "Running", podIP: ip, conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
  ...extra,
});

describe("the vn-agent DaemonSet's pods, as Ring0 serves them", () => {
  it("takes one running pod per node with an address; a ready one wins over one starting", () => {
    const pods = nodeAgentPods([
      agentPod("a", "node-1", "10.244.0.10", true),
      agentPod("b", "node-2", "10.244.1.10", false),
      // Its replacement starting beside it: the ready one serves until it is gone.
      agentPod("c", "node-1", "10.244.0.11", false),
      // Leaving, or not yet placed: neither counts.
      agentPod("d", "node-3", "10.244.2.10", true, {
        metadata: { name: "d", ownerReferences: owner, deletionTimestamp: new Date() },
      }),
      agentPod("e", "", "10.244.2.11", true),
      // Not the DaemonSet's (a pod someone made with its labels), or on the host's network: never.
      agentPod("f", "node-4", "10.244.3.10", true, { metadata: { name: "f" } }),
      agentPod("g", "node-5", "10.244.4.10", true, {
        spec: { nodeName: "node-5", hostNetwork: true, containers: [] },
      }),
    ]);
    expect([...pods]).toEqual([
      ["node-1", { ip: "10.244.0.10", ready: true }],
      ["node-2", { ip: "10.244.1.10", ready: false }],
    ]);
  });

  it("serves no node two ready pods claim until one is gone", () => {
    const pods = nodeAgentPods([
      agentPod("a", "node-1", "10.244.0.10", true),
      agentPod("b", "node-1", "10.244.0.11", true),
    ]);
    expect(pods.has("node-1")).toBe(false);
  });

  it("reads a node's certificate and the callers' CA from the Secret, nothing until all are there", () => {
    const b64 = (text: string) => Buffer.from(text).toString("base64");
    const data = {
      "node.node-1.crt": b64("CERT"),
      "node.node-1.key": b64("KEY"),
      "client-ca.crt": b64("CA"),
    };
    expect(nodeAgentTls(data, "node-1")).toEqual({ cert: "CERT", key: "KEY", clientCa: "CA" });
    expect(nodeAgentTls(data, "node-2")).toBeUndefined();
    expect(
      nodeAgentTls({ "node.node-1.crt": b64("CERT"), "node.node-1.key": b64("KEY") }, "node-1"),
    ).toBeUndefined();
    // A node named like the CA's entry is still a node: its key cannot be the CA's.
    expect(nodeAgentTls({ ...data, "client-ca.crt": b64("CA") }, "client-ca")).toBeUndefined();
    expect(nodeAgentTls(undefined, "node-1")).toBeUndefined();
  });

  it("reaches only its own node's kubelet, at the pod's host address, on the port the node reports", () => {
    const node: V1Node = {
      metadata: { name: "node-1" },
      status: {
        addresses: [{ type: "InternalIP", address: "10.244.0.1" }],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      },
    };
    expect(besideKubelet(node, "10.244.0.1")).toEqual({ host: "10.244.0.1", port: 10250 });
    // A host address the node does not report (the agent moved, or lies): refused.
    expect(besideKubelet(node, "10.244.1.1")).toEqual({
      refused: "the node does not report this agent's host address",
    });
    expect(besideKubelet(undefined, "10.244.0.1")).toEqual({ refused: "the node is gone" });
    expect(besideKubelet({ ...node, status: { addresses: node.status?.addresses } }, "10.244.0.1")).toEqual({
      refused: "the node reports no kubelet endpoint",
    });
  });
});
