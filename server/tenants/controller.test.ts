import { describe, expect, it } from "vitest";
import { changedTenants, tenantTrigger } from "./controller";
import type { TenantResource } from "./tenant-resources";

const tenant = (
  name: string,
  generation: number,
  extra: Partial<TenantResource["metadata"]> = {},
): TenantResource => ({
  apiVersion: "ring0.dev/v1alpha1",
  kind: "Tenant",
  metadata: { name, uid: `uid-${name}`, generation, ...extra },
  spec: {},
});

describe("changedTenants", () => {
  it("enqueues new, spec-changed, deleting and vanished tenants, and ignores status-only changes", () => {
    const before = new Map([
      ["a", tenantTrigger(tenant("a", 1))],
      ["b", tenantTrigger(tenant("b", 1))],
      ["c", tenantTrigger(tenant("c", 1))],
      ["gone", tenantTrigger(tenant("gone", 1))],
    ]);
    const statusOnly = { ...tenant("a", 1), status: { phase: "Ready" as const } };
    const current = [
      statusOnly,
      tenant("b", 2),
      tenant("c", 1, { deletionTimestamp: "2026-11-21T10:00:00Z" }),
      tenant("new", 1),
    ];
    expect(changedTenants(before, current).sort()).toEqual(["b", "c", "gone", "new"]);
  });

  it("treats a re-created tenant of the same name (new uid) as changed", () => {
    const before = new Map([["a", tenantTrigger(tenant("a", 1))]]);
    expect(changedTenants(before, [tenant("a", 1, { uid: "other" })])).toEqual(["a"]);
  });
});
