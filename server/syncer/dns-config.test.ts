import { describe, expect, it } from "vitest";
import { withTenantDns } from "./dns-config";

describe("a pod's resolver below", () => {
  it("points ClusterFirst pods at the pods' DNS with their tenant namespace's search path", () => {
    expect(withTenantDns({ containers: [] }, "10.244.255.1", "shop")).toEqual({
      containers: [],
      dnsPolicy: "None",
      dnsConfig: {
        nameservers: ["10.244.255.1"],
        searches: ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local"],
        options: [{ name: "ndots", value: "5" }],
      },
    });
  });

  it("keeps the tenant's own dnsConfig after Ring0's entries", () => {
    const spec = withTenantDns(
      {
        dnsPolicy: "ClusterFirst",
        dnsConfig: {
          nameservers: ["10.244.0.9"],
          searches: ["corp.internal"],
          options: [{ name: "ndots", value: "2" }],
        },
      },
      "10.244.255.1",
      "shop",
    );
    expect(spec.dnsConfig).toEqual({
      nameservers: ["10.244.255.1", "10.244.0.9"],
      searches: ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.internal"],
      options: [{ name: "ndots", value: "2" }],
    });
  });

  it("leaves pods that chose their resolver, and every pod when there is no pods' DNS", () => {
    const none = { dnsPolicy: "None", dnsConfig: { nameservers: ["10.244.0.9"] } };
    expect(withTenantDns(none, "10.244.255.1", "shop")).toBe(none);
    const node = { dnsPolicy: "Default" };
    expect(withTenantDns(node, "10.244.255.1", "shop")).toBe(node);
    const plain = { containers: [] };
    expect(withTenantDns(plain, undefined, "shop")).toBe(plain);
  });
});
