import { describe, expect, it } from "vitest";
import { auditScope, canAccessTenant, canReadAudit, homePath, isTenantAdmin, roleFromClaims } from "./roles";

describe("roleFromClaims", () => {
  it("makes operators only in the operator tenant", () => {
    expect(roleFromClaims("system", ["operator"], "system")).toBe("operator");
    expect(roleFromClaims("acme", ["operator"], "system")).toBe("tenant-viewer");
    expect(roleFromClaims("acme", ["operator", "tenant-admin"], "system")).toBe("tenant-admin");
  });

  it("picks the strongest claimed role and accepts space- or comma-separated strings", () => {
    expect(roleFromClaims("acme", ["tenant-member", "tenant-admin"], "system")).toBe("tenant-admin");
    expect(roleFromClaims("acme", "tenant-member, tenant-viewer", "system")).toBe("tenant-member");
  });

  it("defaults to viewer when the IAM sends no usable role", () => {
    expect(roleFromClaims("acme", undefined, "system")).toBe("tenant-viewer");
    expect(roleFromClaims("acme", [42, null], "system")).toBe("tenant-viewer");
    expect(roleFromClaims("acme", ["root"], "system")).toBe("tenant-viewer");
  });
});

describe("named checks", () => {
  const operator = { role: "operator", tenant: "system" } as const;
  const acmeAdmin = { role: "tenant-admin", tenant: "acme" } as const;
  const acmeMember = { role: "tenant-member", tenant: "acme" } as const;

  it("keeps tenant users inside their tenant", () => {
    expect(canAccessTenant(acmeMember, "acme")).toBe(true);
    expect(canAccessTenant(acmeMember, "globex")).toBe(false);
    expect(canAccessTenant(operator, "globex")).toBe(true);
  });

  it("scopes audit reading", () => {
    expect(auditScope(operator)).toEqual({ all: true });
    expect(auditScope(acmeAdmin)).toEqual({ tenant: "acme" });
    expect(auditScope(acmeMember)).toBeNull();
    expect(canReadAudit(acmeAdmin, "acme")).toBe(true);
    expect(canReadAudit(acmeAdmin, "globex")).toBe(false);
    expect(canReadAudit(acmeMember, "acme")).toBe(false);
  });

  it("lets only admins of the tenant and operators manage members", () => {
    expect(isTenantAdmin(acmeAdmin, "acme")).toBe(true);
    expect(isTenantAdmin(acmeAdmin, "globex")).toBe(false);
    expect(isTenantAdmin(acmeMember, "acme")).toBe(false);
    expect(isTenantAdmin(operator, "globex")).toBe(true);
  });

  it("sends operators to the console and tenant users to their portal", () => {
    expect(homePath(operator)).toBe("/operator");
    expect(homePath(acmeMember)).toBe("/t/acme");
  });
});
