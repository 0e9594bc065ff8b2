import { describe, expect, it } from "vitest";
import { parseQuantity } from "@/server/core/quantity";
import { tenantUsageFrom } from "./tenant-usage";

const now = new Date("2026-11-21T12:00:00Z");
const pod = (
  namespace: string,
  name: string,
  cpu: string,
  owner?: { kind: string; name: string },
  phase = "Running",
) => ({
  metadata: {
    namespace,
    name,
    ...(owner ? { ownerReferences: [{ ...owner, controller: true }] } : {}),
  },
  spec: { containers: [{ name: "main", resources: { requests: { cpu, memory: "64Mi" }, limits: { cpu } } }] },
  status: { phase },
});

describe("tenantUsageFrom", () => {
  const usage = tenantUsageFrom(
    {
      pods: [
        pod("web", "web-1", "500m", { kind: "ReplicaSet", name: "web-7d" }),
        pod("web", "web-2", "500m", { kind: "ReplicaSet", name: "web-7d" }),
        pod("web", "debug", "100m"),
        pod("batch", "done", "4", { kind: "Job", name: "once" }, "Succeeded"),
      ],
      namespaces: [
        { metadata: { name: "web" } },
        { metadata: { name: "batch" } },
        { metadata: { name: "empty" } },
      ],
      resourceQuotas: [
        { metadata: { namespace: "web", name: "a" }, spec: { hard: { cpu: "2" } } },
        { metadata: { namespace: "web", name: "b" }, spec: { hard: { "requests.cpu": "1500m" } } },
        {
          metadata: { namespace: "web", name: "scoped" },
          spec: { hard: { "requests.cpu": "1m" }, scopes: ["BestEffort"] },
        },
      ],
      others: [{ kind: "ConfigMap", items: [{ metadata: { namespace: "web", name: "kube-root-ca.crt" } }] }],
    },
    now,
  );

  it("sums what counts, skipping finished pods", () => {
    expect(usage.total["requests.cpu"]).toBe(parseQuantity("1100m"));
    expect(usage.total.pods).toBe(parseQuantity("3"));
    expect(usage.total.configmaps).toBe(parseQuantity("1"));
    expect(usage.total.namespaces).toBe(parseQuantity("3"));
  });

  it("breaks usage down by namespace with the tightest unscoped share", () => {
    expect(usage.namespaces.map((entry) => entry.namespace)).toEqual(["batch", "empty", "web"]);
    const web = usage.namespaces.find((entry) => entry.namespace === "web");
    expect(web?.used["requests.cpu"]).toBe(parseQuantity("1100m"));
    expect(web?.shares["requests.cpu"]).toBe(parseQuantity("1500m"));
    expect(usage.namespaces.find((entry) => entry.namespace === "batch")?.used).toEqual({});
  });

  it("groups pods by their controlling owner, biggest first", () => {
    expect(usage.workloads.map(({ kind, name, pods }) => `${kind}/${name}:${pods}`)).toEqual([
      "ReplicaSet/web-7d:2",
      "Pod/debug:1",
    ]);
  });
});
