import { describe, expect, it } from "vitest";
import { identityFromClaims, readClaim } from "./identity";

const settings = { tenantClaim: "tenant", rolesClaim: "roles", operatorTenant: "system" };

describe("identityFromClaims", () => {
  it("maps a tenant admin", () => {
    const result = identityFromClaims(
      {
        sub: "acme:acme-admin",
        tenant: "acme",
        roles: ["tenant-admin"],
        name: "Alice",
        email: "a@acme.example",
      },
      settings,
    );
    expect(result).toEqual({
      ok: true,
      identity: {
        subject: "acme:acme-admin",
        tenant: "acme",
        name: "Alice",
        email: "a@acme.example",
        role: "tenant-admin",
      },
    });
  });

  it("refuses a user without a tenant claim, naming the claim", () => {
    const result = identityFromClaims({ sub: "x" }, settings);
    expect(result).toEqual({ ok: false, reason: expect.stringContaining('"tenant"') });
  });

  it("refuses tenant claims that are not tenant names", () => {
    expect(identityFromClaims({ sub: "x", tenant: "../globex" }, settings).ok).toBe(false);
    expect(identityFromClaims({ sub: "x", tenant: "Acme" }, settings).ok).toBe(false);
  });

  it("reads nested claims by dotted path and falls back for the display name", () => {
    const claims = {
      sub: "s1",
      ext: { org: "globex", groups: ["tenant-member"] },
      preferred_username: "gus",
    };
    expect(readClaim(claims, "ext.org")).toBe("globex");
    const result = identityFromClaims(claims, {
      ...settings,
      tenantClaim: "ext.org",
      rolesClaim: "ext.groups",
    });
    expect(result).toMatchObject({
      ok: true,
      identity: { tenant: "globex", role: "tenant-member", name: "gus" },
    });
  });
});
