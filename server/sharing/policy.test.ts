import { describe, expect, it } from "vitest";
import {
  checkGrant,
  clusterScopedResources,
  defaultSharingPolicy,
  floorApiGroups,
  type GrantViolation,
  parseSharingPolicy,
  type SharingPolicyConfig,
  sharingPolicySchema,
  violationsMessage,
} from "./policy";
import type { GrantRule, SharingSpec } from "./types";

const now = new Date("2026-11-21T12:00:00.000Z");
const inDays = (days: number) => new Date(now.getTime() + days * 86_400_000).toISOString();

const rule: GrantRule = {
  namespaces: ["shared"],
  apiGroups: [""],
  resources: ["pods", "pods/log"],
  verbs: ["get", "list", "watch"],
};

const spec = (overrides: Partial<SharingSpec> = {}): SharingSpec => ({
  ownerTenant: "acme",
  grantees: [{ tenant: "globex" }],
  rules: [rule],
  expiresAt: inDays(30),
  purpose: "debug the shared service",
  ...overrides,
});

const withRule = (overrides: Partial<GrantRule>, extra: Partial<SharingSpec> = {}) =>
  spec({ rules: [{ ...rule, ...overrides }], ...extra });

const policy = (overrides: Partial<SharingPolicyConfig> = {}): SharingPolicyConfig => ({
  ...defaultSharingPolicy,
  ...overrides,
});

const check = (grantSpec: SharingSpec, config: SharingPolicyConfig = defaultSharingPolicy) =>
  checkGrant(grantSpec, config, now);

/** The one violation expected, asserting its rule and that the message names the rule's setting. */
function only(violations: GrantViolation[], rule: string, path?: string): GrantViolation {
  expect(violations.map((violation) => violation.rule)).toEqual([rule]);
  const [violation] = violations;
  if (!violation) throw new Error("no violation");
  if (path) expect(violation.path).toBe(path);
  // The rule is named in the message's closing parenthesis: `(deniedResources)`, `(…; floor:identity)`.
  if (rule !== "format") expect(violation.message).toMatch(new RegExp(`[(; ]${rule}[):]`));
  return violation;
}

describe("checkGrant: a grant within policy", () => {
  it("has no violations", () => {
    expect(check(spec())).toEqual([]);
  });

  it("may name users and role groups", () => {
    expect(
      check(spec({ grantees: [{ tenant: "globex", users: ["gus"], groups: ["admins", "viewers"] }] })),
    ).toEqual([]);
  });

  it("may share pods/exec with create and name resources", () => {
    expect(check(withRule({ resources: ["pods/exec"], resourceNames: ["web"], verbs: ["create"] }))).toEqual(
      [],
    );
  });
});

describe("checkGrant: defaults", () => {
  it("no secrets", () => {
    const violation = only(
      check(withRule({ resources: ["secrets"] })),
      "deniedResources",
      "rules[0].resources",
    );
    expect(violation.message).toBe(
      'rule 1: "secrets" is not shareable under the operator policy (deniedResources)',
    );
  });

  it("a 90-day maximum that needs an expiry", () => {
    expect(defaultSharingPolicy.maxExpiryDays).toBe(90);
    const missing = only(check(spec({ expiresAt: undefined })), "maxExpiryDays", "expiresAt");
    expect(missing.message).toBe(
      "set an expiry: grants may last at most 90 days under the operator policy (maxExpiryDays)",
    );
    expect(check(spec({ expiresAt: inDays(90) }))).toEqual([]);
    const tooLong = only(check(spec({ expiresAt: inDays(90.001) })), "maxExpiryDays", "expiresAt");
    expect(tooLong.message).toBe("grants may last at most 90 days under the operator policy (maxExpiryDays)");
  });

  it("no wildcards in groups, resources or verbs", () => {
    only(check(withRule({ apiGroups: ["*"] })), "allowWildcards", "rules[0].apiGroups");
    only(check(withRule({ resources: ["*"] })), "allowWildcards", "rules[0].resources");
    only(check(withRule({ resources: ["*/log"] })), "allowWildcards", "rules[0].resources");
    only(check(withRule({ resources: ["configmaps"], verbs: ["*"] })), "allowWildcards", "rules[0].verbs");
  });

  it("no writes of workloads: a pod runs with its namespace's Secrets and service accounts", () => {
    for (const resource of ["pods", "deployments", "jobs", "cronjobs", "statefulsets"]) {
      const violation = only(
        check(withRule({ resources: [resource], verbs: ["get", "create"] })),
        "allowWorkloadWrites",
        "rules[0].verbs",
      );
      expect(violation.message).toContain("Secrets and service accounts");
    }
    expect(check(withRule({ resources: ["pods", "pods/log"], verbs: ["get", "list", "watch"] }))).toEqual([]);
    expect(check(withRule({ resources: ["deployments/scale"], verbs: ["update"] }))).toEqual([]);
    expect(check(withRule({ resources: ["pods"], verbs: ["delete"] }))).toEqual([]);
  });

  it("allowWorkloadWrites: true lets the operator allow them", () => {
    expect(
      check(withRule({ resources: ["pods"], verbs: ["create"] }), policy({ allowWorkloadWrites: true })),
    ).toEqual([]);
  });

  it("no deletecollection among the allowed verbs", () => {
    const violation = only(
      check(withRule({ verbs: ["deletecollection"] })),
      "allowedVerbs",
      "rules[0].verbs",
    );
    expect(violation.message).toContain('verb "deletecollection"');
  });

  it("every tenant may grant and receive, without approval", () => {
    expect(defaultSharingPolicy).toMatchObject({ grantors: ["*"], grantees: ["*"], requireApproval: false });
    expect(defaultSharingPolicy.deniedApiGroups).toEqual([]);
  });
});

describe("checkGrant: each policy setting refuses, naming itself", () => {
  it("grantors", () => {
    const violation = only(check(spec(), policy({ grantors: ["initech"] })), "grantors", "ownerTenant");
    expect(violation.message).toBe(
      'tenant "acme" may not share: it is not among the operator policy\'s grantors (grantors)',
    );
    expect(check(spec(), policy({ grantors: ["acme"] }))).toEqual([]);
  });

  it("grantees", () => {
    const violation = only(
      check(spec(), policy({ grantees: ["initech"] })),
      "grantees",
      "grantees[0].tenant",
    );
    expect(violation.message).toBe(
      'tenant "globex" may not receive grants under the operator policy (grantees)',
    );
    expect(check(spec(), policy({ grantees: ["globex"] }))).toEqual([]);
  });

  it("maxExpiryDays, set lower", () => {
    const violation = only(
      check(spec({ expiresAt: inDays(8) }), policy({ maxExpiryDays: 7 })),
      "maxExpiryDays",
    );
    expect(violation.message).toContain("at most 7 days");
    expect(check(spec({ expiresAt: inDays(7) }), policy({ maxExpiryDays: 7 }))).toEqual([]);
  });

  it("maxExpiryDays null: no limit, no expiry needed", () => {
    const unlimited = policy({ maxExpiryDays: null });
    expect(check(spec({ expiresAt: undefined }), unlimited)).toEqual([]);
    expect(check(spec({ expiresAt: inDays(5000) }), unlimited)).toEqual([]);
  });

  it("allowWildcards: true lets the operator allow them", () => {
    const wild = policy({ allowWildcards: true, allowWorkloadWrites: true });
    expect(check(withRule({ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }), wild)).toEqual([]);
  });

  it("deniedResources covers the resource and its subresources, and is configurable", () => {
    const noExec = policy({ deniedResources: ["pods/exec"] });
    only(check(withRule({ resources: ["pods/exec"], verbs: ["create"] }), noExec), "deniedResources");
    expect(check(withRule({ resources: ["secrets"] }), noExec)).toEqual([]);
    const noPods = policy({ deniedResources: ["pods"] });
    const violations = check(withRule({ resources: ["pods", "pods/log"] }), noPods);
    expect(violations.map((violation) => violation.rule)).toEqual(["deniedResources", "deniedResources"]);
  });

  it("deniedApiGroups, naming the core group", () => {
    const violation = only(
      check(spec(), policy({ deniedApiGroups: [""] })),
      "deniedApiGroups",
      "rules[0].apiGroups",
    );
    expect(violation.message).toBe(
      'rule 1: API group "core" is not shareable under the operator policy (deniedApiGroups)',
    );
    only(
      check(withRule({ apiGroups: ["batch"], resources: ["jobs"] }), policy({ deniedApiGroups: ["batch"] })),
      "deniedApiGroups",
    );
  });

  it("allowedVerbs", () => {
    const readOnly = policy({ allowedVerbs: ["get", "list", "watch"] });
    const violation = only(
      check(withRule({ verbs: ["get", "delete"] }), readOnly),
      "allowedVerbs",
      "rules[0].verbs",
    );
    expect(violation.message).toBe(
      'rule 1: verb "delete" is not allowed by the operator policy (allowedVerbs: get, list, watch)',
    );
  });
});

describe("checkGrant: the floor no policy lowers", () => {
  const everything = policy({
    allowWildcards: true,
    allowWorkloadWrites: true,
    deniedResources: [],
    allowedVerbs: ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"],
    maxExpiryDays: null,
  });

  it.each(floorApiGroups)("API group %s (floor:control-plane)", (group) => {
    const violation = only(
      check(withRule({ apiGroups: [group] }), everything),
      "floor:control-plane",
      "rules[0].apiGroups",
    );
    expect(violation.message).toContain(`API group "${group}" is never shareable`);
  });

  it.each(clusterScopedResources)("cluster-scoped %s (floor:cluster-scoped)", (resource) => {
    only(
      check(withRule({ resources: [resource] }), everything),
      "floor:cluster-scoped",
      "rules[0].resources",
    );
  });

  it("a subresource of a cluster-scoped resource (namespaces/status)", () => {
    only(check(withRule({ resources: ["namespaces/status"] }), everything), "floor:cluster-scoped");
  });

  it.each([
    "serviceaccounts/token",
    "pods/ephemeralcontainers",
    "pods/proxy",
    "services/proxy",
    "bindings",
    "tokenreviews",
  ])("%s (floor:identity)", (resource) => {
    only(check(withRule({ resources: [resource] }), everything), "floor:identity", "rules[0].resources");
  });

  it('"*" namespaces (floor:named-namespaces), even with wildcards allowed', () => {
    const violation = only(check(withRule({ namespaces: ["*"] }), everything), "floor:named-namespaces");
    expect(violation.message).toContain("name the namespaces");
  });

  it("sharing with itself (floor:self)", () => {
    only(check(spec({ grantees: [{ tenant: "acme" }] }), everything), "floor:self", "grantees[0].tenant");
  });
});

describe("checkGrant: format", () => {
  it("the owner and grantee tenants must be tenant names", () => {
    only(check(spec({ ownerTenant: "Acme!" })), "format", "ownerTenant");
    only(check(spec({ grantees: [{ tenant: "*" }] })), "format", "grantees[0].tenant");
    only(check(spec({ grantees: [{ tenant: "Globex" }] })), "format", "grantees[0].tenant");
  });

  it("at least one grantee and one rule", () => {
    only(check(spec({ grantees: [] })), "format", "grantees");
    only(check(spec({ rules: [] })), "format", "rules");
  });

  it.each(["namespaces", "apiGroups", "resources", "verbs"] as const)(
    "a rule names at least one of its %s",
    (field) => {
      only(check(withRule({ [field]: [] })), "format", `rules[0].${field}`);
    },
  );

  it("a grantee tenant named twice", () => {
    const violation = only(check(spec({ grantees: [{ tenant: "globex" }, { tenant: "globex" }] })), "format");
    expect(violation.path).toBe("grantees[1].tenant");
  });

  it("role groups are admins, members or viewers", () => {
    const violation = only(check(spec({ grantees: [{ tenant: "globex", groups: ["owners"] }] })), "format");
    expect(violation.message).toBe('"owners" is not a role group; use admins, members, viewers');
  });

  it("user names have no spaces, colons or stars", () => {
    for (const name of ["globex:gus", "gus smith", "*", ""]) {
      only(check(spec({ grantees: [{ tenant: "globex", users: [name] }] })), "format", "grantees[0].users");
    }
  });

  it("namespaces are DNS labels", () => {
    only(check(withRule({ namespaces: ["Shared_NS"] })), "format", "rules[0].namespaces");
  });

  it("verbs are ones a grant can name", () => {
    for (const verb of ["escalate", "bind", "impersonate", "GET"]) {
      only(check(withRule({ verbs: [verb] })), "format", "rules[0].verbs");
    }
  });

  it("resource names are names", () => {
    only(check(withRule({ resourceNames: ["*"] })), "format", "rules[0].resourceNames");
    only(check(withRule({ resourceNames: [" "] })), "format", "rules[0].resourceNames");
  });

  it("an expiry is a date in the future", () => {
    only(check(spec({ expiresAt: "soon" })), "format", "expiresAt");
    only(check(spec({ expiresAt: now.toISOString() })), "format", "expiresAt");
  });

  it("a purpose is said", () => {
    only(check(spec({ purpose: "  " })), "format", "purpose");
  });

  it("reports every violation, in spec order, with the rule's number", () => {
    const violations = check(
      spec({
        grantees: [{ tenant: "globex" }],
        rules: [rule, { ...rule, resources: ["secrets"], verbs: ["*"] }],
        expiresAt: undefined,
        purpose: "",
      }),
    );
    expect(violations.map((violation) => [violation.path, violation.rule])).toEqual([
      ["rules[1].resources", "deniedResources"],
      ["rules[1].verbs", "allowWildcards"],
      ["expiresAt", "maxExpiryDays"],
      ["purpose", "format"],
    ]);
    expect(violations[0]?.message.startsWith("rule 2:")).toBe(true);
    expect(violationsMessage(violations)).toBe(
      `The grant breaks the sharing policy: ${violations.map((violation) => violation.message).join("; ")}.`,
    );
  });
});

describe("parseSharingPolicy", () => {
  it("no text is the default policy", () => {
    expect(parseSharingPolicy(undefined)).toEqual(defaultSharingPolicy);
    expect(parseSharingPolicy("  ")).toEqual(defaultSharingPolicy);
    expect(parseSharingPolicy("{}")).toEqual(defaultSharingPolicy);
  });

  it("reads the settings given and defaults the rest", () => {
    expect(
      parseSharingPolicy('{"requireApproval": true, "maxExpiryDays": null, "grantees": ["globex"]}'),
    ).toEqual({
      ...defaultSharingPolicy,
      requireApproval: true,
      maxExpiryDays: null,
      grantees: ["globex"],
    });
  });

  it('refuses "*" among the allowed verbs, pointing at allowWildcards', () => {
    expect(() => parseSharingPolicy('{"allowedVerbs": ["get", "*"]}')).toThrow(
      /allowedVerbs\.1: expected one of get, list, .*\("\*" is allowWildcards\)/,
    );
  });

  it("refuses text that is not JSON", () => {
    expect(() => parseSharingPolicy("{requireApproval: true}")).toThrow(
      /^RING0_SHARING_POLICY is not JSON: /,
    );
  });

  it("refuses unknown keys, naming them", () => {
    expect(() => parseSharingPolicy('{"allowWildcard": true}')).toThrow(
      /^RING0_SHARING_POLICY: \(root\): .*allowWildcard/,
    );
  });

  it("names every bad setting by its path", () => {
    let message = "";
    try {
      parseSharingPolicy('{"maxExpiryDays": 0, "allowedVerbs": ["get", "escalate"], "grantors": "acme"}');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^RING0_SHARING_POLICY: /);
    expect(message).toContain("maxExpiryDays: ");
    expect(message).toContain("allowedVerbs.1: ");
    expect(message).toContain("grantors: ");
  });

  it("refuses a policy that is not an object", () => {
    expect(() => parseSharingPolicy("[]")).toThrow(/^RING0_SHARING_POLICY: \(root\): /);
    expect(() => parseSharingPolicy("null")).toThrow(/^RING0_SHARING_POLICY: /);
  });

  it("the schema is the one parseSharingPolicy applies", () => {
    expect(sharingPolicySchema.parse({})).toEqual(defaultSharingPolicy);
  });
});
