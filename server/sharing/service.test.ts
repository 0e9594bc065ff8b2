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
  it("passes a grant within the policy", () => {
    expect(grantViolations(spec(), defaultSharingPolicy, now, "system")).toEqual([]);
  });

  it("accepts a well-formed grantee the policy allows whether or not such a tenant exists", () => {
    expect(
      grantViolations(spec({ grantees: [{ tenant: "nosuch" }] }), defaultSharingPolicy, now, "system"),
    ).toEqual([]);
    const policy = { ...defaultSharingPolicy, grantees: ["nosuch"] };
    expect(grantViolations(spec({ grantees: [{ tenant: "nosuch" }] }), policy, now, "system")).toEqual([]);
  });

  it("says the same of the operators' tenant and one the policy keeps out", () => {
    const policy = { ...defaultSharingPolicy, grantees: ["globex", "system"] };
    const messages = ["system", "initech"].map(
      (tenant) =>
        grantViolations(spec({ grantees: [{ tenant }] }), policy, now, "system").map((v) => v.message)[0],
    );
    expect(messages).toEqual([
      'tenant "system" cannot receive grants (operator policy: grantees)',
      'tenant "initech" cannot receive grants (operator policy: grantees)',
    ]);
  });

  it("keeps the violations in spec order", () => {
    const violations = grantViolations(
      spec({ grantees: [{ tenant: "system" }], rules: [{ ...rule, resources: ["secrets"] }], purpose: "" }),
      defaultSharingPolicy,
      now,
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
