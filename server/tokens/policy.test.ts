import { describe, expect, it } from "vitest";
import {
  canFilterTokensBy,
  canIssueTokenFor,
  canManageToken,
  shouldRecordUse,
  tokenVisibility,
} from "@/server/tokens/policy";

const operator = { id: "op", role: "operator", tenant: "system" } as const;
const acmeAdmin = { id: "aa", role: "tenant-admin", tenant: "acme" } as const;
const acmeMember = { id: "am", role: "tenant-member", tenant: "acme" } as const;

describe("token policy", () => {
  it("issues only for a reachable tenant", () => {
    expect(canIssueTokenFor(acmeMember, "acme")).toBe(true);
    expect(canIssueTokenFor(acmeMember, "globex")).toBe(false);
    expect(canIssueTokenFor(acmeAdmin, "globex")).toBe(false);
    expect(canIssueTokenFor(operator, "globex")).toBe(true);
  });

  it("scopes visibility by role", () => {
    expect(tokenVisibility(operator)).toEqual({ all: true });
    expect(tokenVisibility(acmeAdmin)).toEqual({ tenant: "acme", userId: "aa" });
    expect(tokenVisibility(acmeMember)).toEqual({ userId: "am" });
  });

  it("lets owners, their tenant's admins and operators manage a token", () => {
    const adminsToken = { userId: "aa", tenant: "acme" };
    const membersToken = { userId: "am", tenant: "acme" };
    const globexToken = { userId: "ga", tenant: "globex" };
    expect(canManageToken(acmeMember, membersToken)).toBe(true);
    expect(canManageToken(acmeMember, adminsToken)).toBe(false);
    expect(canManageToken(acmeAdmin, membersToken)).toBe(true);
    expect(canManageToken(acmeAdmin, globexToken)).toBe(false);
    expect(canManageToken(operator, globexToken)).toBe(true);
  });

  it("filters lists only by reachable tenants", () => {
    expect(canFilterTokensBy(acmeAdmin, "acme")).toBe(true);
    expect(canFilterTokensBy(acmeAdmin, "globex")).toBe(false);
    expect(canFilterTokensBy(operator, "globex")).toBe(true);
  });

  it("records a use at most once a minute", () => {
    const now = new Date("2026-11-21T12:00:00Z");
    expect(shouldRecordUse(null, now)).toBe(true);
    expect(shouldRecordUse(new Date("2026-11-21T11:59:30Z"), now)).toBe(false);
    expect(shouldRecordUse(new Date("2026-11-21T11:59:00Z"), now)).toBe(true);
  });
});
