import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Ring0Role } from "@/server/core/roles";
import {
  authorizeByGrants,
  expiryOf,
  type GranteeUser,
  granteeMatches,
  granteeUserName,
  grantState,
  grantsFor,
  isDiscovery,
  isLive,
  ownersSharingWith,
  ruleCovers,
  sharedNamespaces,
  specHash,
} from "./grants";
import { clusterScopedResources } from "./policy";
import { type RequestAttributes, requestAttributes } from "./request-info";
import { type GrantRule, type SharingPolicyResource, type SharingSpec, sharingAnnotations } from "./types";

type ResourceAttributes = Extract<RequestAttributes, { kind: "resource" }>;

const now = new Date("2026-11-21T12:00:00.000Z");

const podsReadRule: GrantRule = {
  namespaces: ["shared"],
  apiGroups: [""],
  resources: ["pods", "pods/log"],
  verbs: ["get", "list", "watch"],
};

function spec(overrides: Partial<SharingSpec> = {}): SharingSpec {
  return {
    ownerTenant: "acme",
    grantees: [{ tenant: "globex" }],
    rules: [podsReadRule],
    purpose: "debug the shared service",
    ...overrides,
  };
}

/** A grant approved for its spec (unless `approved` is false), with optional extra annotations. */
function grant(
  name: string,
  grantSpec: SharingSpec = spec(),
  options: { approved?: boolean; annotations?: Record<string, string>; deleting?: boolean } = {},
): SharingPolicyResource {
  const approval: Record<string, string> =
    options.approved === false
      ? {}
      : {
          [sharingAnnotations.approvedSpec]: specHash(grantSpec),
          [sharingAnnotations.approvedBy]: "ops:olivia",
        };
  return {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "SharingPolicy",
    metadata: {
      name,
      annotations: { ...approval, ...options.annotations },
      ...(options.deleting ? { deletionTimestamp: now.toISOString() } : {}),
    },
    spec: grantSpec,
  };
}

const user = (tenant: string, subject: string, role: Ring0Role = "tenant-member"): GranteeUser => ({
  tenant,
  subject,
  role,
});

const resourceRequest = (fields: Partial<ResourceAttributes>): ResourceAttributes => ({
  kind: "resource",
  verb: "get",
  apiGroup: "",
  apiVersion: "v1",
  namespace: "shared",
  resource: "pods",
  subresource: "",
  name: "",
  ...fields,
});

describe("specHash", () => {
  it("is stable under key order and ignores undefined fields", () => {
    const a = spec({ expiresAt: undefined });
    const b: SharingSpec = {
      purpose: a.purpose,
      rules: a.rules,
      grantees: a.grantees,
      ownerTenant: a.ownerTenant,
    };
    expect(specHash(a)).toBe(specHash(b));
    expect(specHash(a)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("changes with any change of who, what or until when", () => {
    const base = specHash(spec());
    expect(specHash(spec({ grantees: [{ tenant: "initech" }] }))).not.toBe(base);
    expect(specHash(spec({ rules: [{ ...podsReadRule, verbs: ["get"] }] }))).not.toBe(base);
    expect(specHash(spec({ expiresAt: "2026-12-01T00:00:00Z" }))).not.toBe(base);
    expect(specHash(spec({ purpose: "something else" }))).not.toBe(base);
    // Order inside a list is part of the spec.
    expect(specHash(spec({ rules: [{ ...podsReadRule, resources: ["pods/log", "pods"] }] }))).not.toBe(base);
  });
});

describe("grantState", () => {
  const revoked = {
    [sharingAnnotations.revokedAt]: "2026-11-21T11:00:00Z",
    [sharingAnnotations.revokedBy]: "acme:ann",
  };
  const expired = spec({ expiresAt: "2026-11-21T11:00:00Z" });

  it("an approved grant for its spec is Active", () => {
    expect(grantState(grant("acme.g"), now)).toEqual({
      state: "Active",
      reason: "Approved",
      message: "Approved by ops:olivia.",
    });
  });

  it("revoked comes before expired, pending and active", () => {
    const decision = grantState(grant("acme.g", expired, { approved: false, annotations: revoked }), now);
    expect(decision).toMatchObject({ state: "Revoked", reason: "Revoked" });
    expect(decision.message).toBe("Revoked by acme:ann at 2026-11-21T11:00:00Z.");
  });

  it("expired comes before pending", () => {
    expect(grantState(grant("acme.g", expired, { approved: false }), now)).toEqual({
      state: "Expired",
      reason: "Expired",
      message: "Expired at 2026-11-21T11:00:00.000Z.",
    });
  });

  it("pending comes before active: no approval yet", () => {
    expect(grantState(grant("acme.g", spec(), { approved: false }), now)).toMatchObject({
      state: "PendingApproval",
      reason: "AwaitingApproval",
    });
  });

  it("an approval is bound to the spec hash: an edit needs approving again", () => {
    const approved = grant("acme.g");
    const edited: SharingPolicyResource = {
      ...approved,
      spec: { ...approved.spec, rules: [{ ...podsReadRule, verbs: ["get", "list", "watch", "delete"] }] },
    };
    expect(grantState(edited, now)).toEqual({
      state: "PendingApproval",
      reason: "ChangedSinceApproval",
      message: "The grant changed since it was approved; an operator must approve it again.",
    });
    expect(isLive(edited, now)).toBe(false);
  });

  it("expires exactly at its expiry, not a millisecond later", () => {
    const at = spec({ expiresAt: now.toISOString() });
    expect(grantState(grant("acme.g", at), new Date(now.getTime() - 1)).state).toBe("Active");
    expect(grantState(grant("acme.g", at), now).state).toBe("Expired");
  });

  it("an unreadable expiry counts as expired (fails closed)", () => {
    const bad = grant("acme.g", spec({ expiresAt: "next tuesday" }));
    expect(expiryOf(bad)?.getTime()).toBe(0);
    expect(grantState(bad, now).state).toBe("Expired");
  });

  it("no expiry never expires", () => {
    expect(expiryOf(grant("acme.g"))).toBeNull();
    expect(grantState(grant("acme.g"), new Date("2100-01-01T00:00:00Z")).state).toBe("Active");
  });

  it("a grant being deleted is revoked", () => {
    expect(grantState(grant("acme.g", spec(), { deleting: true }), now)).toMatchObject({
      state: "Revoked",
      reason: "Deleting",
    });
  });

  it("a revocation without its author still reads", () => {
    const decision = grantState(
      grant("acme.g", spec(), { annotations: { [sharingAnnotations.revokedAt]: "t" } }),
      now,
    );
    expect(decision.message).toBe("Revoked by someone at t.");
  });

  it("an approval without its approver names Ring0", () => {
    const g = grant("acme.g", spec(), {
      approved: false,
      annotations: { [sharingAnnotations.approvedSpec]: specHash(spec()) },
    });
    expect(grantState(g, now).message).toBe("Approved by Ring0.");
  });
});

describe("isLive", () => {
  it("is true only for Active grants", () => {
    expect(isLive(grant("acme.g"), now)).toBe(true);
    expect(isLive(grant("acme.g", spec(), { approved: false }), now)).toBe(false);
    expect(isLive(grant("acme.g", spec({ expiresAt: now.toISOString() })), now)).toBe(false);
    expect(
      isLive(grant("acme.g", spec(), { annotations: { [sharingAnnotations.revokedAt]: "t" } }), now),
    ).toBe(false);
  });

  it("is false when a grantee is the owner itself, even approved", () => {
    expect(isLive(grant("acme.g", spec({ grantees: [{ tenant: "globex" }, { tenant: "acme" }] })), now)).toBe(
      false,
    );
  });
});

describe("granteeMatches", () => {
  it("a whole-tenant grantee matches every non-operator user of that tenant", () => {
    for (const role of ["tenant-admin", "tenant-member", "tenant-viewer"] as const) {
      expect(granteeMatches(spec(), user("globex", "globex:gus", role))).toBe(true);
    }
  });

  it("never matches operators", () => {
    expect(granteeMatches(spec(), user("globex", "globex:gus", "operator"))).toBe(false);
    expect(
      granteeMatches(spec({ grantees: [{ tenant: "ops" }] }), user("ops", "ops:olivia", "operator")),
    ).toBe(false);
  });

  it("never matches the owner's own users, even when the spec names the owner", () => {
    const self = spec({ grantees: [{ tenant: "acme" }, { tenant: "globex" }] });
    expect(granteeMatches(self, user("acme", "acme:ann", "tenant-viewer"))).toBe(false);
  });

  it("never matches users of other tenants", () => {
    expect(granteeMatches(spec(), user("initech", "initech:ian"))).toBe(false);
  });

  describe("named users", () => {
    const named = spec({ grantees: [{ tenant: "globex", users: ["gus"] }] });

    it("match with and without the `<tenant>:` prefix on the subject", () => {
      expect(granteeMatches(named, user("globex", "globex:gus"))).toBe(true);
      expect(granteeMatches(named, user("globex", "gus"))).toBe(true);
    });

    it("do not match other users of the tenant", () => {
      expect(granteeMatches(named, user("globex", "globex:gina"))).toBe(false);
      expect(granteeMatches(named, user("globex", "globex:gus2"))).toBe(false);
    });

    it("do not match another tenant's user with the same user name", () => {
      expect(granteeMatches(named, user("initech", "initech:gus"))).toBe(false);
      expect(granteeMatches(named, user("initech", "gus"))).toBe(false);
      // Even a subject that spells the grantee tenant's prefix stays in its own tenant.
      expect(granteeMatches(named, user("initech", "globex:gus"))).toBe(false);
    });
  });

  describe("role groups", () => {
    it.each([
      ["admins", "tenant-admin"],
      ["members", "tenant-member"],
      ["viewers", "tenant-viewer"],
    ] as const)("%s matches Ring0's %s and no other role", (group, role) => {
      const grouped = spec({ grantees: [{ tenant: "globex", groups: [group] }] });
      for (const other of ["tenant-admin", "tenant-member", "tenant-viewer"] as const) {
        expect(granteeMatches(grouped, user("globex", "globex:gus", other))).toBe(other === role);
      }
      expect(granteeMatches(grouped, user("initech", "initech:ian", role))).toBe(false);
      expect(granteeMatches(grouped, user("globex", "globex:gus", "operator"))).toBe(false);
    });

    it("users and groups together match either", () => {
      const both = spec({ grantees: [{ tenant: "globex", users: ["gus"], groups: ["admins"] }] });
      expect(granteeMatches(both, user("globex", "globex:gus", "tenant-viewer"))).toBe(true);
      expect(granteeMatches(both, user("globex", "globex:gina", "tenant-admin"))).toBe(true);
      expect(granteeMatches(both, user("globex", "globex:gina", "tenant-member"))).toBe(false);
    });

    it("an empty users list with groups is not a whole-tenant grant", () => {
      const grouped = spec({ grantees: [{ tenant: "globex", users: [], groups: ["viewers"] }] });
      expect(granteeMatches(grouped, user("globex", "globex:gina", "tenant-admin"))).toBe(false);
    });
  });

  it("granteeUserName strips only the user's own tenant prefix", () => {
    expect(granteeUserName({ tenant: "globex", subject: "globex:gus" })).toBe("gus");
    expect(granteeUserName({ tenant: "globex", subject: "gus" })).toBe("gus");
    expect(granteeUserName({ tenant: "globex", subject: "initech:gus" })).toBe("initech:gus");
  });
});

describe("grantsFor and ownersSharingWith", () => {
  const gus = user("globex", "globex:gus");
  const grants = [
    grant("acme.live"),
    grant("acme.pending", spec(), { approved: false }),
    grant("acme.expired", spec({ expiresAt: "2026-01-01T00:00:00Z" })),
    grant("acme.others", spec({ grantees: [{ tenant: "initech" }] })),
    grant("umbrella.live", spec({ ownerTenant: "umbrella" })),
    grant("hooli.revoked", spec({ ownerTenant: "hooli" }), {
      annotations: { [sharingAnnotations.revokedAt]: "t" },
    }),
  ];

  it("keeps the live grants of one owner that include the user", () => {
    expect(grantsFor(grants, "acme", gus, now).map((g) => g.metadata.name)).toEqual(["acme.live"]);
    expect(grantsFor(grants, "hooli", gus, now)).toEqual([]);
    expect(
      grantsFor(grants, "acme", user("initech", "initech:ian"), now).map((g) => g.metadata.name),
    ).toEqual(["acme.others"]);
  });

  it("lists each owner sharing with the user once, sorted", () => {
    expect(ownersSharingWith([...grants, grant("acme.again")], gus, now)).toEqual(["acme", "umbrella"]);
    expect(ownersSharingWith(grants, user("globex", "globex:gus", "operator"), now)).toEqual([]);
  });
});

describe("ruleCovers", () => {
  it("covers the granted verbs on the granted resources in the granted namespace", () => {
    expect(ruleCovers(podsReadRule, resourceRequest({ verb: "list" }))).toBe(true);
    expect(ruleCovers(podsReadRule, resourceRequest({ verb: "get", name: "web", subresource: "log" }))).toBe(
      true,
    );
  });

  it("requires the namespace to match exactly", () => {
    expect(ruleCovers(podsReadRule, resourceRequest({ namespace: "shared-2" }))).toBe(false);
    expect(ruleCovers(podsReadRule, resourceRequest({ namespace: "Shared" }))).toBe(false);
    expect(ruleCovers(podsReadRule, resourceRequest({ namespace: "" }))).toBe(false);
    expect(ruleCovers({ ...podsReadRule, namespaces: ["*"] }, resourceRequest({ namespace: "other" }))).toBe(
      false,
    );
  });

  it("refuses other verbs, groups and resources", () => {
    expect(ruleCovers(podsReadRule, resourceRequest({ verb: "delete", name: "web" }))).toBe(false);
    expect(ruleCovers(podsReadRule, resourceRequest({ apiGroup: "apps" }))).toBe(false);
    expect(ruleCovers(podsReadRule, resourceRequest({ resource: "configmaps" }))).toBe(false);
  });

  it("a subresource is its own key: pods does not cover pods/exec, pods/log does not cover pods", () => {
    const podsOnly: GrantRule = { ...podsReadRule, resources: ["pods"], verbs: ["get", "create"] };
    expect(ruleCovers(podsOnly, resourceRequest({ verb: "create", name: "web", subresource: "exec" }))).toBe(
      false,
    );
    expect(ruleCovers(podsOnly, resourceRequest({ name: "web", subresource: "log" }))).toBe(false);
    const logOnly: GrantRule = { ...podsReadRule, resources: ["pods/log"] };
    expect(ruleCovers(logOnly, resourceRequest({ name: "web" }))).toBe(false);
    expect(ruleCovers(logOnly, resourceRequest({ name: "web", subresource: "log" }))).toBe(true);
  });

  it('"*" in groups, resources and verbs matches anything above the floor', () => {
    const wild: GrantRule = { namespaces: ["shared"], apiGroups: ["*"], resources: ["*"], verbs: ["*"] };
    expect(
      ruleCovers(
        wild,
        resourceRequest({ verb: "deletecollection", apiGroup: "apps", resource: "deployments" }),
      ),
    ).toBe(true);
    expect(ruleCovers(wild, resourceRequest({ verb: "create", name: "web", subresource: "exec" }))).toBe(
      true,
    );
    expect(
      ruleCovers({ ...podsReadRule, verbs: ["*"] }, resourceRequest({ verb: "patch", name: "web" })),
    ).toBe(true);
    expect(
      ruleCovers({ ...podsReadRule, apiGroups: ["*"] }, resourceRequest({ apiGroup: "metrics.k8s.io" })),
    ).toBe(true);
  });

  it('"*/<subresource>" matches that subresource of any resource, as in RBAC', () => {
    const anyLog: GrantRule = { ...podsReadRule, resources: ["*/log"] };
    expect(ruleCovers(anyLog, resourceRequest({ name: "web", subresource: "log" }))).toBe(true);
    expect(ruleCovers(anyLog, resourceRequest({ name: "web", subresource: "exec" }))).toBe(false);
    expect(ruleCovers(anyLog, resourceRequest({ name: "web" }))).toBe(false);
  });

  it("resourceNames require a name, and that name", () => {
    const named: GrantRule = { ...podsReadRule, resourceNames: ["web"] };
    expect(ruleCovers(named, resourceRequest({ name: "web" }))).toBe(true);
    expect(ruleCovers(named, resourceRequest({ name: "db" }))).toBe(false);
    expect(ruleCovers(named, resourceRequest({ verb: "list" }))).toBe(false);
    expect(ruleCovers(named, resourceRequest({ verb: "list", name: "web" }))).toBe(true);
    expect(ruleCovers({ ...podsReadRule, resourceNames: [] }, resourceRequest({ verb: "list" }))).toBe(true);
  });

  describe("the floor holds under wildcards", () => {
    const wild: GrantRule = { namespaces: ["shared"], apiGroups: ["*"], resources: ["*"], verbs: ["*"] };

    it("never the namespace object, its status or finalize (cluster-scoped)", () => {
      for (const [method, path] of [
        ["GET", "/api/v1/namespaces/shared"],
        ["DELETE", "/api/v1/namespaces/shared"],
        ["PUT", "/api/v1/namespaces/shared/status"],
        ["PUT", "/api/v1/namespaces/shared/finalize"],
      ] as const) {
        const request = requestAttributes(method, path, new URLSearchParams());
        expect(request.kind).toBe("resource");
        expect(ruleCovers(wild, request as ResourceAttributes)).toBe(false);
      }
    });

    it("never RBAC, Ring0's API or the control plane's configuration", () => {
      for (const apiGroup of ["rbac.authorization.k8s.io", "ring0.dev", "admissionregistration.k8s.io"]) {
        expect(
          ruleCovers(wild, resourceRequest({ verb: "create", apiGroup, resource: "rolebindings" })),
        ).toBe(false);
      }
    });

    it("never a service account token, ephemeral containers or bindings", () => {
      expect(
        ruleCovers(
          wild,
          resourceRequest({
            verb: "create",
            resource: "serviceaccounts",
            name: "default",
            subresource: "token",
          }),
        ),
      ).toBe(false);
      expect(
        ruleCovers(wild, resourceRequest({ verb: "patch", name: "web", subresource: "ephemeralcontainers" })),
      ).toBe(false);
      expect(ruleCovers(wild, resourceRequest({ verb: "create", resource: "bindings" }))).toBe(false);
      const anyToken: GrantRule = { ...wild, resources: ["*/token"] };
      expect(
        ruleCovers(
          anyToken,
          resourceRequest({ verb: "create", resource: "serviceaccounts", name: "x", subresource: "token" }),
        ),
      ).toBe(false);
    });

    it("still the service account itself", () => {
      expect(ruleCovers(wild, resourceRequest({ resource: "serviceaccounts", name: "default" }))).toBe(true);
    });
  });
});

describe("isDiscovery", () => {
  const discovery = (path: string, verb = "get") => isDiscovery({ kind: "non-resource", verb, path });

  it.each([
    "/api",
    "/api/v1",
    "/apis",
    "/apis/apps",
    "/apis/apps/v1",
    "/version",
    "/openapi/v2",
    "/openapi/v3",
    "/openapi/v3/api/v1",
    "/openapi/v3/apis/apps/v1",
  ])("%s is discovery", (path) => {
    expect(discovery(path)).toBe(true);
  });

  it.each([
    "/healthz",
    "/livez",
    "/readyz",
    "/metrics",
    "/logs",
    "/debug/pprof",
    "/",
    "/openapi/v3/apis/apps/v1/x",
  ])("%s is not", (path) => {
    expect(discovery(path)).toBe(false);
  });

  it("is read-only", () => {
    expect(discovery("/apis", "create")).toBe(false);
    expect(discovery("/version", "delete")).toBe(false);
  });
});

describe("authorizeByGrants", () => {
  const live = [grant("acme.pods")];
  const decide = (method: string, path: string, query = "", upgrade = false) =>
    authorizeByGrants(live, requestAttributes(method, path, new URLSearchParams(query), upgrade), "acme");

  it("without grants, answers as a tenant that does not exist, whatever the request", () => {
    expect(authorizeByGrants([], requestAttributes("GET", "/api", new URLSearchParams()), "acme")).toEqual({
      allowed: false,
      message: 'tenant "acme" not found',
    });
    expect(authorizeByGrants([], { kind: "invalid", reason: "x" }, "acme")).toEqual({
      allowed: false,
      message: 'tenant "acme" not found',
    });
  });

  it("allows what a grant covers and names the grant", () => {
    expect(decide("GET", "/api/v1/namespaces/shared/pods")).toEqual({ allowed: true, grant: "acme.pods" });
    expect(decide("GET", "/api/v1/namespaces/shared/pods/web/log", "follow=true")).toEqual({
      allowed: true,
      grant: "acme.pods",
    });
  });

  it("names the first grant that covers the request", () => {
    const second = grant(
      "acme.deploys",
      spec({ rules: [{ ...podsReadRule, apiGroups: ["apps"], resources: ["deployments"] }] }),
    );
    const attributes = requestAttributes(
      "GET",
      "/apis/apps/v1/namespaces/shared/deployments",
      new URLSearchParams(),
    );
    expect(authorizeByGrants([...live, second], attributes, "acme")).toEqual({
      allowed: true,
      grant: "acme.deploys",
    });
  });

  it("allows discovery without naming a grant", () => {
    for (const path of ["/api", "/apis", "/apis/apps/v1", "/version", "/openapi/v3/apis/apps/v1"]) {
      expect(decide("GET", path)).toEqual({ allowed: true, grant: null });
    }
  });

  it("refuses other non-resource paths, naming the verb and path", () => {
    expect(decide("GET", "/healthz")).toEqual({
      allowed: false,
      message: 'forbidden: what tenant "acme" shares with you does not include get /healthz',
    });
    expect(decide("GET", "/metrics")).toMatchObject({ allowed: false });
  });

  it("refuses invalid requests with their reason", () => {
    expect(decide("OPTIONS", "/api/v1/namespaces/shared/pods")).toEqual({
      allowed: false,
      message: "invalid request: method OPTIONS is not a Kubernetes API verb",
    });
  });

  it("names the verb, resource, name and namespace of what it refuses", () => {
    expect(decide("DELETE", "/api/v1/namespaces/shared/pods/web")).toEqual({
      allowed: false,
      message:
        'forbidden: what tenant "acme" shares with you does not include delete pods "web" in namespace "shared"',
    });
    expect(decide("GET", "/api/v1/namespaces/other/pods")).toEqual({
      allowed: false,
      message:
        'forbidden: what tenant "acme" shares with you does not include list pods in namespace "other"',
    });
    expect(decide("POST", "/api/v1/namespaces/shared/pods/web/exec", "command=sh", true)).toMatchObject({
      message:
        'forbidden: what tenant "acme" shares with you does not include create pods/exec "web" in namespace "shared"',
    });
    expect(decide("GET", "/apis/apps/v1/namespaces/shared/deployments")).toMatchObject({
      message:
        'forbidden: what tenant "acme" shares with you does not include list deployments.apps in namespace "shared"',
    });
  });

  it("refuses cluster-scoped requests, saying so", () => {
    expect(decide("GET", "/api/v1/pods")).toEqual({
      allowed: false,
      message: 'forbidden: what tenant "acme" shares with you does not include list pods at cluster scope',
    });
    expect(decide("GET", "/api/v1/nodes")).toMatchObject({ allowed: false });
  });

  it("a list narrowed by field selector is allowed by a grant naming that object", () => {
    const named = [grant("acme.web", spec({ rules: [{ ...podsReadRule, resourceNames: ["web"] }] }))];
    const list = (query: string) =>
      authorizeByGrants(
        named,
        requestAttributes("GET", "/api/v1/namespaces/shared/pods", new URLSearchParams(query)),
        "acme",
      );
    expect(list("fieldSelector=metadata.name%3Dweb")).toEqual({ allowed: true, grant: "acme.web" });
    expect(list("watch=true&fieldSelector=metadata.name%3Dweb")).toEqual({
      allowed: true,
      grant: "acme.web",
    });
    expect(list("")).toMatchObject({ allowed: false });
    expect(list("fieldSelector=metadata.name%3Ddb")).toMatchObject({ allowed: false });
  });

  it("exec needs create on pods/exec, however it arrives", () => {
    const exec = [
      grant("acme.exec", spec({ rules: [{ ...podsReadRule, resources: ["pods/exec"], verbs: ["create"] }] })),
    ];
    const attempt = (method: string, upgrade: boolean) =>
      authorizeByGrants(
        exec,
        requestAttributes(
          method,
          "/api/v1/namespaces/shared/pods/web/exec",
          new URLSearchParams("command=sh"),
          upgrade,
        ),
        "acme",
      ).allowed;
    expect(attempt("GET", true)).toBe(true);
    expect(attempt("POST", true)).toBe(true);
    expect(attempt("GET", false)).toBe(false);
    // A read grant never opens a shell.
    expect(decide("GET", "/api/v1/namespaces/shared/pods/web/exec", "command=sh", true).allowed).toBe(false);
  });
});

describe("authorizeByGrants: properties", () => {
  const names = ["shared", "other", "kube-system", "default", "prod"];
  const ruleArbitrary: fc.Arbitrary<GrantRule> = fc.record({
    namespaces: fc.subarray(names, { minLength: 1 }),
    apiGroups: fc.subarray(["", "apps", "batch", "*", "rbac.authorization.k8s.io"], { minLength: 1 }),
    resources: fc.subarray(
      ["pods", "pods/log", "pods/exec", "deployments", "*", "*/status", "namespaces", "nodes", "secrets"],
      { minLength: 1 },
    ),
    resourceNames: fc.option(fc.subarray(["web", "db", "shared"], { minLength: 1 }), { nil: undefined }),
    verbs: fc.subarray(
      ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "*"],
      {
        minLength: 1,
      },
    ),
  });
  const grantsArbitrary = fc.array(
    fc.array(ruleArbitrary, { minLength: 1, maxLength: 3 }).map((rules) => spec({ rules })),
    { minLength: 1, maxLength: 3 },
  );
  const segment = fc.constantFrom(
    ...names,
    "web",
    "db",
    "pods",
    "nodes",
    "namespaces",
    "log",
    "exec",
    "status",
    "%2Fx",
  );
  const method = fc.constantFrom("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");
  const query = fc.constantFrom(
    "",
    "watch=true",
    "fieldSelector=metadata.name%3Dweb",
    "watch=1&fieldSelector=metadata.name%3Ddb",
  );
  /** Paths shaped like real requests (mostly namespaced, often covered) and arbitrary segment soups. */
  const pathArbitrary = fc.oneof(
    fc
      .record({
        prefix: fc.constantFrom(
          "/api/v1",
          "/apis/apps/v1",
          "/apis/rbac.authorization.k8s.io/v1",
          "/api/v1/watch",
        ),
        namespace: fc.option(fc.constantFrom(...names), { nil: undefined }),
        resource: fc.constantFrom("pods", "deployments", "namespaces", "nodes", "secrets", "rolebindings"),
        name: fc.option(fc.constantFrom("web", "db", "shared"), { nil: undefined }),
        subresource: fc.option(fc.constantFrom("log", "exec", "status", "token"), { nil: undefined }),
      })
      .map(({ prefix, namespace, resource, name, subresource }) =>
        [
          prefix,
          namespace ? `namespaces/${namespace}` : "",
          resource,
          name ?? "",
          name && subresource ? subresource : "",
        ]
          .filter(Boolean)
          .join("/"),
      ),
    fc
      .record({
        prefix: fc.constantFrom("/api/v1", "/apis/apps/v1", "/api/v1/watch", "/api/v1/namespaces"),
        segments: fc.array(segment, { maxLength: 6 }),
      })
      .map(({ prefix, segments }) => [prefix, ...segments].join("/")),
  );
  const requestArbitrary = fc.record({ method, path: pathArbitrary, query, upgrade: fc.boolean() });

  it("never allows a resource request outside every namespace a grant lists, nor at cluster scope", () => {
    let allowedResourceRequests = 0;
    fc.assert(
      fc.property(grantsArbitrary, requestArbitrary, (specs, request) => {
        const grants = specs.map((s, index) => grant(`acme.g${index}`, s));
        const attributes = requestAttributes(
          request.method,
          request.path,
          new URLSearchParams(request.query),
          request.upgrade,
        );
        const decision = authorizeByGrants(grants, attributes, "acme");
        if (!decision.allowed || attributes.kind !== "resource") return;
        allowedResourceRequests += 1;
        const listed = grants.some((g) =>
          g.spec.rules.some((rule) => rule.namespaces.includes(attributes.namespace)),
        );
        expect(listed).toBe(true);
        expect(attributes.namespace).not.toBe("");
        expect(clusterScopedResources).not.toContain(attributes.resource);
        expect(attributes.apiGroup).not.toBe("rbac.authorization.k8s.io");
      }),
      { numRuns: 2000 },
    );
    // The property is not vacuous: plenty of the generated requests are allowed.
    expect(allowedResourceRequests).toBeGreaterThan(20);
  });

  it("allows only discovery among non-resource requests, and nothing with no grants", () => {
    fc.assert(
      fc.property(
        grantsArbitrary,
        fc.constantFrom(
          "/api",
          "/apis",
          "/healthz",
          "/metrics",
          "/version",
          "/openapi/v3/apis/apps/v1",
          "/logs/x",
        ),
        fc.constantFrom("GET", "POST", "DELETE"),
        (specs, path, method) => {
          const attributes = requestAttributes(method, path, new URLSearchParams());
          const grants = specs.map((s, index) => grant(`acme.g${index}`, s));
          const decision = authorizeByGrants(grants, attributes, "acme");
          expect(decision.allowed).toBe(attributes.kind === "non-resource" && isDiscovery(attributes));
          expect(authorizeByGrants([], attributes, "acme").allowed).toBe(false);
        },
      ),
    );
  });
});

describe("sharedNamespaces", () => {
  it("lists every namespace a rule names, once, sorted", () => {
    const grants = [
      grant("acme.a", spec({ rules: [{ ...podsReadRule, namespaces: ["shared", "prod"] }] })),
      grant("acme.b", spec({ rules: [podsReadRule, { ...podsReadRule, namespaces: ["apps"] }] })),
    ];
    expect(sharedNamespaces(grants)).toEqual(["apps", "prod", "shared"]);
    expect(sharedNamespaces([])).toEqual([]);
  });
});
