import { describe, expect, it } from "vitest";
import { parseQuantity } from "@/server/core/quantity";
import type { TenantUsage } from "@/server/quotas/tenant-usage";
import {
  belowUsageMessage,
  desiredHard,
  invalidQuotaMessage,
  overagesOf,
  PREVIEW_TOP,
  previewQuota,
} from "./quota-change";

const q = parseQuantity;

describe("desiredHard", () => {
  it("takes a template's limits with explicit ones over them, aliases meaning their resource", () => {
    const result = desiredHard(
      { name: "small", hard: { "requests.cpu": "2", "requests.memory": "4Gi", pods: "20" } },
      { cpu: "3", services: "5" },
    );
    expect(result).toEqual({
      ok: true,
      hard: { "requests.cpu": q("3"), "requests.memory": q("4Gi"), pods: q("20"), services: q("5") },
    });
  });

  it("reports every bad entry at once and keeps nothing", () => {
    const result = desiredHard(null, {
      pods: "-1",
      "requests.cpu": "1.5.3",
      "requests.memory": "12Xi",
      gpus: "1",
      services: "3",
    });
    expect(result.ok).toBe(false);
    const errors = result.ok ? [] : result.errors;
    expect(errors).toHaveLength(4);
    expect(errors.join("\n")).toMatch(/pods: '-1' is negative/);
    expect(errors.join("\n")).toMatch(/requests\.cpu: '1\.5\.3' is not a quantity/);
    expect(errors.join("\n")).toMatch(/requests\.memory: '12Xi' is not a quantity/);
    expect(errors.join("\n")).toMatch(/unknown resource 'gpus'/);
    expect(invalidQuotaMessage(errors)).toMatch(/^Invalid quota — .*Nothing was changed\.$/);
  });

  it("names a template whose stored limits are no longer valid", () => {
    const result = desiredHard({ name: "old", hard: { "count/pods": "3" } }, undefined);
    expect(result).toEqual({
      ok: false,
      errors: [expect.stringMatching(/^template "old": unknown resource/)],
    });
  });
});

describe("overagesOf", () => {
  it("refuses limits this change puts below usage, and only reports limits that were already there", () => {
    const used = { "requests.cpu": q("3"), pods: q("12"), services: q("1") };
    const current = { pods: q("10"), "requests.cpu": q("8") };
    const next = { pods: q("10"), "requests.cpu": q("2"), services: q("5") };
    const { refused, alreadyOver } = overagesOf(current, next, used);
    expect(refused).toEqual([{ resource: "requests.cpu", used: q("3"), limit: q("2"), over: q("1") }]);
    expect(alreadyOver).toEqual([{ resource: "pods", used: q("12"), limit: q("10"), over: q("2") }]);
    expect(belowUsageMessage("acme", refused)).toMatch(
      /^Tenant "acme" already uses more than the new quota allows — requests\.cpu: used 3, limit 2\. .*allowBelowUsage/,
    );
  });
});

describe("previewQuota", () => {
  const usage: TenantUsage = {
    at: new Date("2030-01-01T00:00:00Z"),
    total: { "requests.cpu": q("2500m"), pods: q("4"), configmaps: q("3") },
    namespaces: [
      { namespace: "a", used: { "requests.cpu": q("2"), pods: q("3") }, shares: { "requests.cpu": q("2") } },
      {
        namespace: "b",
        used: { "requests.cpu": q("500m"), pods: q("1") },
        shares: { "requests.cpu": q("1") },
      },
      { namespace: "c", used: { configmaps: q("3") }, shares: {} },
    ],
    workloads: [
      { namespace: "b", kind: "ReplicaSet", name: "small", pods: 1, used: { "requests.cpu": q("500m") } },
      { namespace: "a", kind: "StatefulSet", name: "db", pods: 3, used: { "requests.cpu": q("2") } },
    ],
  };

  it("names the resources over with their biggest namespaces and workloads, shares that no longer fit, and namespaces over alone", () => {
    const preview = previewQuota({ "requests.cpu": q("1500m"), pods: q("10") }, usage);
    expect(preview.hard).toEqual({ "requests.cpu": "1500m", pods: "10" });
    expect(preview.used).toEqual({ "requests.cpu": "2500m", pods: "4", configmaps: "3" });
    expect(preview.over).toEqual([
      {
        resource: "requests.cpu",
        used: "2500m",
        limit: "1500m",
        namespaces: [
          { namespace: "a", used: "2" },
          { namespace: "b", used: "500m" },
        ],
        workloads: [
          { namespace: "a", kind: "StatefulSet", name: "db", pods: 3, used: "2" },
          { namespace: "b", kind: "ReplicaSet", name: "small", pods: 1, used: "500m" },
        ],
      },
    ]);
    expect(preview.shares).toEqual([
      {
        resource: "requests.cpu",
        limit: "1500m",
        total: "3",
        namespaces: [
          { namespace: "a", share: "2" },
          { namespace: "b", share: "1" },
        ],
      },
    ]);
    expect(preview.namespacesOver).toEqual([
      { namespace: "a", resource: "requests.cpu", used: "2", limit: "1500m" },
    ]);
  });

  it("says nothing is over when everything fits, and knows nothing without usage", () => {
    expect(previewQuota({ "requests.cpu": q("4") }, usage)).toMatchObject({
      over: [],
      shares: [],
      namespacesOver: [],
    });
    expect(previewQuota({ pods: q("1") }, null)).toEqual({
      hard: { pods: "1" },
      usageAt: null,
      used: null,
      over: [],
      shares: [],
      namespacesOver: [],
    });
  });

  it(`names at most ${PREVIEW_TOP} workloads per resource`, () => {
    const many: TenantUsage = {
      ...usage,
      workloads: Array.from({ length: 8 }, (_, index) => ({
        namespace: "a",
        kind: "Pod",
        name: `p${index}`,
        pods: 1,
        used: { pods: q("1") },
      })),
      total: { pods: q("8") },
    };
    expect(previewQuota({ pods: q("2") }, many).over[0]!.workloads).toHaveLength(PREVIEW_TOP);
  });
});
