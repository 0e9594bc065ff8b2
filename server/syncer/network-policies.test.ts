import { describe, expect, it } from "vitest";
import { syncLabels } from "./contracts";
import { namespaceLabelKey, namespaceLabelsBelow, superNetworkPolicySpec } from "./network-policies";
import { superObject } from "./translate";

describe("NetworkPolicies below", () => {
  it("keep their rules; a peer's namespaces are the tenant's own, by their mirrored labels", () => {
    const spec = superNetworkPolicySpec(
      {
        podSelector: { matchLabels: { app: "db" } },
        policyTypes: ["Ingress", "Egress"],
        ingress: [
          {
            from: [
              { podSelector: { matchLabels: { app: "web" } } },
              { namespaceSelector: {} },
              {
                namespaceSelector: {
                  matchLabels: { team: "shop" },
                  matchExpressions: [
                    { key: "kubernetes.io/metadata.name", operator: "In", values: ["a", "b"] },
                  ],
                },
                podSelector: { matchLabels: { role: "client" } },
              },
            ],
            ports: [{ protocol: "TCP", port: 5432 }],
          },
        ],
        egress: [{ to: [{ ipBlock: { cidr: "10.244.255.1/32" } }], ports: [{ protocol: "UDP", port: 53 }] }],
      },
      "acme",
    );
    expect(spec.podSelector).toEqual({ matchLabels: { app: "db" } });
    const from = (spec.ingress as { from: Record<string, unknown>[] }[])[0]?.from ?? [];
    expect(from[0]).toEqual({ podSelector: { matchLabels: { app: "web" } } });
    // "Every namespace" is every namespace of this tenant, never another's or the super cluster's.
    expect(from[1]).toEqual({ namespaceSelector: { matchLabels: { [syncLabels.tenant]: "acme" } } });
    expect(from[2]).toEqual({
      namespaceSelector: {
        matchLabels: { [namespaceLabelKey("team")]: "shop", [syncLabels.tenant]: "acme" },
        matchExpressions: [
          { key: namespaceLabelKey("kubernetes.io/metadata.name"), operator: "In", values: ["a", "b"] },
        ],
      },
      podSelector: { matchLabels: { role: "client" } },
    });
    expect(spec.egress).toEqual([
      { to: [{ ipBlock: { cidr: "10.244.255.1/32" } }], ports: [{ protocol: "UDP", port: 53 }] },
    ]);
  });

  it("a tenant's selector naming Ring0's tenant label still stays within the tenant", () => {
    const spec = superNetworkPolicySpec(
      { ingress: [{ from: [{ namespaceSelector: { matchLabels: { [syncLabels.tenant]: "globex" } } }] }] },
      "acme",
    );
    const selector = (
      spec.ingress as { from: { namespaceSelector: { matchLabels: Record<string, string> } }[] }[]
    )[0]?.from[0]?.namespaceSelector;
    expect(selector?.matchLabels[syncLabels.tenant]).toBe("acme");
    expect(selector?.matchLabels[namespaceLabelKey(syncLabels.tenant)]).toBe("globex");
  });

  it("super namespaces carry the tenant namespace's labels, and its name, under Ring0's keys", () => {
    const mirrored = namespaceLabelsBelow({ team: "shop" }, "orders");
    expect(mirrored).toEqual({
      [namespaceLabelKey("team")]: "shop",
      [namespaceLabelKey("kubernetes.io/metadata.name")]: "orders",
    });
    for (const key of Object.keys(mirrored)) expect(key.split("/")[1]?.length).toBeLessThanOrEqual(63);
    const below = superObject("acme", "networkpolicy", {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "deny", namespace: "orders", uid: "u" },
      spec: { podSelector: {}, policyTypes: ["Ingress"] },
    });
    expect(below).toMatchObject({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "deny", labels: { [syncLabels.tenant]: "acme" } },
      spec: { podSelector: {}, policyTypes: ["Ingress"] },
    });
    expect(below.metadata.namespace).not.toBe("orders");
  });
});
