import { describe, expect, it } from "vitest";
import {
  actsAsGrantee,
  decideGranteeAccess,
  type GranteeVerdict,
  grantsInForce,
  podAttributes,
  policyRefusal,
} from "./access";
import { specHash } from "./grants";
import { defaultSharingPolicy, sharingPolicySchema } from "./policy";
import { type SharingPolicyResource, type SharingSpec, sharingAnnotations } from "./types";
import type { GrantUse } from "./usage";

const now = new Date("2026-11-21T12:00:00Z");
const gus = { tenant: "globex", subject: "globex:gus", role: "tenant-member" as const };

function grant(spec: Partial<SharingSpec> = {}): SharingPolicyResource {
  const full: SharingSpec = {
    ownerTenant: "acme",
    grantees: [{ tenant: "globex" }],
    rules: [{ namespaces: ["shared"], apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }],
    expiresAt: "2026-11-28T12:00:00Z",
    purpose: "on-call",
    ...spec,
  };
  return {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "SharingPolicy",
    metadata: { name: "acme.oncall", annotations: { [sharingAnnotations.approvedSpec]: specHash(full) } },
    spec: full,
  };
}

describe("grantsInForce", () => {
  it("keeps a live grant within the policy", () => {
    expect(grantsInForce([grant()], "acme", gus, now, defaultSharingPolicy)).toHaveLength(1);
  });

  it("drops an approved grant the policy in force forbids (an approval never lifts the policy)", () => {
    const tightened = sharingPolicySchema.parse({ maxExpiryDays: 3 });
    expect(grantsInForce([grant()], "acme", gus, now, tightened)).toEqual([]);
    const noSecrets = grant({
      rules: [{ namespaces: ["shared"], apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
    });
    expect(grantsInForce([noSecrets], "acme", gus, now, defaultSharingPolicy)).toEqual([]);
  });

  it("drops grants of other owners and for other users", () => {
    expect(grantsInForce([grant()], "initech", gus, now, defaultSharingPolicy)).toEqual([]);
    const other = { ...gus, tenant: "initech", subject: "initech:gus" };
    expect(grantsInForce([grant()], "acme", other, now, defaultSharingPolicy)).toEqual([]);
  });
});

describe("policyRefusal", () => {
  const wildcards = sharingPolicySchema.parse({ allowWildcards: true });

  it("refuses a denied resource a wildcard rule would reach", () => {
    const secrets = { ...podAttributes("get", "shared", "keys"), resource: "secrets" };
    expect(policyRefusal(secrets, "acme", wildcards)).toContain("sharing policy does not allow it");
    expect(policyRefusal(podAttributes("get", "shared", "web"), "acme", wildcards)).toBeNull();
  });

  it("refuses a verb the policy does not allow", () => {
    expect(policyRefusal(podAttributes("deletecollection", "shared"), "acme", wildcards)).toContain(
      "deletecollection pods",
    );
  });

  it("has nothing to say about discovery", () => {
    expect(policyRefusal({ kind: "non-resource", verb: "get", path: "/api" }, "acme", wildcards)).toBeNull();
  });
});

describe("actsAsGrantee", () => {
  it("is a non-operator outside their own tenant", () => {
    expect(actsAsGrantee({ role: "tenant-admin", tenant: "globex" }, "acme")).toBe(true);
    expect(actsAsGrantee({ role: "tenant-admin", tenant: "acme" }, "acme")).toBe(false);
    expect(actsAsGrantee({ role: "operator", tenant: "system" }, "acme")).toBe(false);
  });
});

describe("workload writes", () => {
  it("are refused on the request unless the policy allows them, whatever a wildcard rule says", () => {
    const wildcards = sharingPolicySchema.parse({ allowWildcards: true });
    expect(policyRefusal(podAttributes("create", "shared"), "acme", wildcards)).toContain("create pods");
    const deployment = {
      ...podAttributes("patch", "shared", "web"),
      apiGroup: "apps",
      resource: "deployments",
    };
    expect(policyRefusal(deployment, "acme", wildcards)).toContain("patch deployments");
    expect(policyRefusal(podAttributes("delete", "shared", "web"), "acme", wildcards)).toBeNull();
    expect(policyRefusal(podAttributes("create", "shared", "web", "exec"), "acme", wildcards)).toBeNull();
    const allowed = sharingPolicySchema.parse({ allowWildcards: true, allowWorkloadWrites: true });
    expect(policyRefusal(podAttributes("create", "shared"), "acme", allowed)).toBeNull();
  });
});

describe("decideGranteeAccess", () => {
  const user = {
    id: "u1",
    name: "Gina",
    tenant: "globex",
    subject: "globex:gina",
    role: "tenant-member" as const,
  };
  const decide = (verdict: () => Promise<GranteeVerdict>, uses: GrantUse[] = []) =>
    decideGranteeAccess(user, "acme", podAttributes("get", "shared", "web", "log"), "logs", {
      verdict,
      recordUse: (use) => uses.push(use),
    });

  it("is one answer for every door: allow (recording the use), notFound, forbidden, unavailable", async () => {
    const uses: GrantUse[] = [];
    expect(await decide(async () => ({ kind: "allowed", grant: "acme.logs" }), uses)).toEqual({
      kind: "allow",
      grant: "acme.logs",
    });
    expect(uses).toMatchObject([{ owner: "acme", grant: "acme.logs", resource: "pods/log", via: "logs" }]);
    expect(await decide(async () => ({ kind: "no-grant" }))).toEqual({
      kind: "notFound",
      message: 'Tenant "acme" was not found.',
    });
    expect(await decide(async () => ({ kind: "outside", message: "forbidden: not shared" }))).toEqual({
      kind: "forbidden",
      message: "forbidden: not shared",
    });
    const failure = new Error("informer down");
    expect(
      await decide(async () => {
        throw failure;
      }),
    ).toEqual({
      kind: "unavailable",
      message: "Ring0 cannot check sharing grants right now; try again shortly.",
      cause: failure,
    });
  });
});
