import { describe, expect, it } from "vitest";
import { defaultSharingPolicy } from "./policy";
import { grantSpec, grantViolations, specChanges } from "./service";
import type { SharingSpec } from "./types";

const now = new Date("2026-01-01T00:00:00Z");
const rule = { namespaces: ["shared"], apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] };
const spec = (overrides: Partial<SharingSpec> = {}): SharingSpec => ({
  ownerTenant: "acme",
  grantees: [{ tenant: "globex" }],
  rules: [rule],
  expiresAt: "2026-01-08T00:00:00.000Z",
  purpose: "debugging",
  ...overrides,
});

describe("grantSpec", () => {
  it("stores lists without duplicates or empty optional parts, and the expiry in UTC", () => {
    expect(
      grantSpec("acme", {
        grantees: [{ tenant: "globex", users: [], groups: ["members", "members"] }],
        rules: [{ ...rule, verbs: ["get", "get"], resourceNames: [] }],
        expiresAt: "2026-01-08T02:00:00+02:00",
        purpose: "  debugging ",
      }),
    ).toEqual(
      spec({ grantees: [{ tenant: "globex", groups: ["members"] }], rules: [{ ...rule, verbs: ["get"] }] }),
    );
  });
});

describe("grantViolations", () => {
  const tenants = new Set(["acme", "globex", "initech", "system"]);

  it("passes a grant within the policy to an existing tenant", () => {
    expect(grantViolations(spec(), defaultSharingPolicy, now, tenants, "system")).toEqual([]);
  });

  it("says the same of an absent tenant, the operators' tenant and one the policy keeps out", () => {
    const policy = { ...defaultSharingPolicy, grantees: ["globex", "nosuch", "system"] };
    const messages = ["nosuch", "system", "initech"].map(
      (tenant) =>
        grantViolations(spec({ grantees: [{ tenant }] }), policy, now, tenants, "system").map(
          (v) => v.message,
        )[0],
    );
    expect(messages).toEqual([
      'tenant "nosuch" cannot receive grants (operator policy: grantees)',
      'tenant "system" cannot receive grants (operator policy: grantees)',
      'tenant "initech" cannot receive grants (operator policy: grantees)',
    ]);
  });

  it("keeps the violations in spec order", () => {
    const violations = grantViolations(
      spec({ grantees: [{ tenant: "nosuch" }], rules: [{ ...rule, resources: ["secrets"] }], purpose: "" }),
      defaultSharingPolicy,
      now,
      tenants,
      "system",
    );
    expect(violations.map((violation) => violation.rule)).toEqual(["grantees", "deniedResources", "format"]);
  });
});

describe("specChanges", () => {
  it("names only what changed", () => {
    expect(specChanges(spec(), spec({ purpose: "other", expiresAt: undefined }))).toEqual({
      expiresAt: { from: "2026-01-08T00:00:00.000Z", to: null },
      purpose: { from: "debugging", to: "other" },
    });
  });
});
