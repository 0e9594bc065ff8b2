import { describe, expect, it } from "vitest";
import { parseQuantity } from "@/server/core/quantity";
import type { QuotaResource } from "@/server/core/quota-resources";
import {
  DEFAULT_SHARE_QUOTA_NAME,
  defaultShareMisfit,
  defaultShareQuota,
  invalidDefaultShareMessage,
  isNewNamespace,
  NEW_NAMESPACE_WINDOW_MS,
  validateDefaultShare,
} from "./default-share";

const q = (text: string) => parseQuantity(text);
const shares = (entries: Record<string, Partial<Record<QuotaResource, string>>>) =>
  new Map(
    Object.entries(entries).map(([namespace, hard]) => [
      namespace,
      new Map(Object.entries(hard).map(([resource, value]) => [resource as QuotaResource, q(value!)])),
    ]),
  );

describe("validateDefaultShare", () => {
  it("accepts namespace-level resources (aliases too) within the tenant quota, canonically", () => {
    const result = validateDefaultShare(
      { cpu: "500m", "limits.memory": "1Gi", pods: "10" },
      { "requests.cpu": q("2") },
    );
    expect(result).toEqual({
      ok: true,
      hard: { "requests.cpu": q("500m"), "limits.memory": q("1Gi"), pods: q("10") },
    });
  });

  it("reports every bad entry at once: bad quantities, unknown names, namespaces, above the tenant's limit", () => {
    const result = validateDefaultShare(
      { pods: "-1", "requests.cpu": "3", gpus: "1", namespaces: "2", memory: "12Xi" },
      { "requests.cpu": q("2") },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toHaveLength(5);
    const text = invalidDefaultShareMessage(result.errors);
    expect(text).toContain("pods: '-1' is negative");
    expect(text).toContain("unknown resource 'gpus'");
    expect(text).toContain("memory: '12Xi' is not a quantity");
    expect(text).toContain("namespaces: a namespace's quota cannot limit it");
    expect(text).toContain("requests.cpu: 3 is more than the tenant's quota of 2");
    expect(text).toMatch(/Nothing was changed\.$/);
  });

  it("refuses an empty share (clearing is its own request)", () => {
    const result = validateDefaultShare({}, {});
    expect(result.ok).toBe(false);
  });

  it("allows any amount of a resource the tenant quota does not limit", () => {
    expect(validateDefaultShare({ "requests.memory": "64Gi" }, { "requests.cpu": q("1") }).ok).toBe(true);
  });
});

describe("defaultShareMisfit", () => {
  it("fits when what the namespaces' shares leave is enough", () => {
    const given = shares({ "team-a": { "requests.cpu": "1" }, "team-b": { "requests.cpu": "500m" } });
    expect(
      defaultShareMisfit({ "requests.cpu": q("500m") }, { "requests.cpu": q("2") }, given),
    ).toBeUndefined();
  });

  it("names the share, what the namespaces give, the tenant's limit and each namespace", () => {
    const given = shares({ "team-b": { "requests.cpu": "800m" }, "team-a": { "requests.cpu": "1" } });
    expect(defaultShareMisfit({ "requests.cpu": q("500m") }, { "requests.cpu": q("2") }, given)).toBe(
      "the default share for new namespaces (requests.cpu 500m) does not fit: the namespaces' quotas already give 1800m of the tenant's 2 (team-a 1, team-b 800m); lower the default share or a namespace's quota",
    );
  });

  it("names each resource that does not fit when several do not", () => {
    const given = shares({ a: { "requests.cpu": "2", pods: "9" } });
    const message = defaultShareMisfit(
      { "requests.cpu": q("1"), pods: q("2"), "requests.memory": q("1Gi") },
      { "requests.cpu": q("2"), pods: q("10") },
      given,
    );
    expect(message).toContain(
      "(requests.cpu 1, pods 2) does not fit: requests.cpu: the namespaces' quotas already give 2 of the tenant's 2 (a 2); pods: the namespaces' quotas already give 9 of the tenant's 10 (a 9)",
    );
  });

  it("ignores resources the tenant quota does not limit", () => {
    expect(defaultShareMisfit({ pods: q("100") }, { "requests.cpu": q("1") }, shares({}))).toBeUndefined();
  });
});

describe("isNewNamespace", () => {
  const now = Date.parse("2026-11-21T12:00:00Z");
  it("is new within the window, not before it or without a timestamp", () => {
    expect(isNewNamespace("2026-11-21T11:59:30Z", now)).toBe(true);
    expect(isNewNamespace(new Date(now - NEW_NAMESPACE_WINDOW_MS - 1), now)).toBe(false);
    expect(isNewNamespace(undefined, now)).toBe(false);
  });
});

describe("defaultShareQuota", () => {
  it("is an unprotected Ring0-labelled ResourceQuota with the share, canonical and namespace-level only", () => {
    const quota = defaultShareQuota("work", { cpu: "500m", pods: "10", namespaces: "3", bad: "x" });
    expect(quota.metadata).toMatchObject({
      name: DEFAULT_SHARE_QUOTA_NAME,
      namespace: "work",
      labels: { "app.kubernetes.io/managed-by": "ring0", "ring0.dev/default-share": "true" },
    });
    expect(quota.metadata.labels).not.toHaveProperty("ring0.dev/protected");
    expect(quota.spec).toEqual({ hard: { "requests.cpu": "500m", pods: "10" } });
  });
});
