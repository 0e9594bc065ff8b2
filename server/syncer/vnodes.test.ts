import { describe, expect, it } from "vitest";
import { syncLabels } from "./contracts";
import { boundNodeAnnotation, type Obj } from "./session";
import { nodesRunningTenant } from "./vnodes";

const tenantPod = (name: string, node?: string, boundByRing0 = true): Obj => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name,
    namespace: "team",
    ...(node && boundByRing0 ? { annotations: { [boundNodeAnnotation]: node } } : {}),
  },
  spec: node ? { nodeName: node } : {},
});

const superPod = (name: string, tenant: string, node?: string): Obj => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: `t-${tenant}-team`, labels: { [syncLabels.tenant]: tenant } },
  spec: node ? { nodeName: node } : {},
});

describe("which super nodes a tenant needs vNodes for", () => {
  it("counts the nodes Ring0 bound the tenant's pods to", () => {
    const nodes = nodesRunningTenant("acme", [tenantPod("a", "n0"), tenantPod("b", "n1")], []);
    expect([...nodes].sort()).toEqual(["n0", "n1"]);
  });

  it("ignores unbound pods and pods the tenant pinned to a node name itself", () => {
    const nodes = nodesRunningTenant("acme", [tenantPod("a"), tenantPod("b", "n2", false)], []);
    expect(nodes.size).toBe(0);
  });

  it("counts nodes the tenant's copies are scheduled to below, before the tenant pod is bound", () => {
    const nodes = nodesRunningTenant("acme", [tenantPod("a")], [superPod("a", "acme", "n3")]);
    expect([...nodes]).toEqual(["n3"]);
  });

  it("never counts another tenant's pods below, nor unscheduled copies", () => {
    const nodes = nodesRunningTenant(
      "acme",
      [],
      [superPod("a", "globex", "n4"), superPod("b", "acme"), superPod("c", "acme", "n5")],
    );
    expect([...nodes]).toEqual(["n5"]);
  });

  it("keeps a node in use while any one pod of the tenant runs there", () => {
    const nodes = nodesRunningTenant(
      "acme",
      [tenantPod("a", "n0"), tenantPod("b", "n0")],
      [superPod("a", "acme", "n0")],
    );
    expect([...nodes]).toEqual(["n0"]);
  });
});
