import { describe, expect, it } from "vitest";
import { grantConcernsTenant, tenantDeletedRevoker } from "./tenant-deleted";
import type { SharingPolicyResource } from "./types";

const grant = (owner: string, grantees: string[]): SharingPolicyResource =>
  ({
    metadata: { name: `${owner}.g` },
    spec: {
      ownerTenant: owner,
      grantees: grantees.map((tenant) => ({ tenant })),
      rules: [],
      purpose: "",
    },
  }) as unknown as SharingPolicyResource;

describe("grantConcernsTenant", () => {
  it("is true for the owner and every grantee, false for anyone else", () => {
    expect(grantConcernsTenant(grant("acme", ["globex"]), "acme")).toBe(true);
    expect(grantConcernsTenant(grant("acme", ["initech", "globex"]), "globex")).toBe(true);
    expect(grantConcernsTenant(grant("acme", ["globex"]), "initech")).toBe(false);
    // A name that merely starts like the tenant's is not the tenant.
    expect(grantConcernsTenant(grant("acme-2", ["globex-2"]), "acme")).toBe(false);
  });

  it("names the tenant in the revoker", () => {
    expect(tenantDeletedRevoker("acme")).toBe("Ring0 (tenant acme deleted)");
  });
});
