import { describe, expect, it } from "vitest";
import type { Ring0Role } from "@/server/core/roles";
import type { NamespacedResource } from "@/server/k8s/discovery";
import { managedLabels, protectedLabel } from "@/server/tenants/defaults";
import { granteeIdentity, granteesGroup } from "@/server/tenants/kube-identity";
import { granteeMatches } from "./grants";
import { defaultSharingPolicy, type SharingPolicyConfig } from "./policy";
import { explicitRules, grantRbacManifests, grantRbacName, grantSubjects, hasWildcard } from "./rbac";
import {
  type GrantRule,
  grantLabel,
  ownerLabel,
  type SharingPolicyResource,
  type SharingSpec,
} from "./types";

const readPods: GrantRule = {
  namespaces: ["shared"],
  apiGroups: [""],
  resources: ["pods", "pods/log"],
  verbs: ["get", "list", "watch"],
};

function grant(spec: Partial<SharingSpec> = {}, name = "acme.debug"): SharingPolicyResource {
  return {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "SharingPolicy",
    metadata: { name },
    spec: {
      ownerTenant: "acme",
      grantees: [{ tenant: "globex" }],
      rules: [readPods],
      purpose: "debug the shared service",
      ...spec,
    },
  };
}

interface Manifest {
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  rules?: Record<string, unknown>[];
  roleRef?: Record<string, string>;
  subjects?: { apiGroup: string; kind: string; name: string }[];
}

const manifests = (resource: SharingPolicyResource) => grantRbacManifests(resource) as unknown as Manifest[];
const rbac = (name: string, kind: "Group" | "User") => ({
  apiGroup: "rbac.authorization.k8s.io",
  kind,
  name,
});

describe("grantRbacName", () => {
  it("is ring0:share:<grant>", () => {
    expect(grantRbacName("acme.debug")).toBe("ring0:share:acme.debug");
  });
});

describe("granteeIdentity", () => {
  it("is the user's home identity plus ring0:grantees, never the owner's groups", () => {
    expect(granteeIdentity({ tenant: "globex", subject: "globex:gus", role: "tenant-viewer" })).toEqual({
      user: "globex:gus",
      groups: ["ring0:grantees", "ring0:tenant:globex", "ring0:tenant:globex:viewers"],
    });
    expect(granteeIdentity({ tenant: "globex", subject: "gus", role: "tenant-admin" })).toEqual({
      user: "globex:gus",
      groups: ["ring0:grantees", "ring0:tenant:globex", "ring0:tenant:globex:admins"],
    });
    expect(granteeIdentity({ tenant: "globex", subject: "gus", role: "tenant-member" }).groups).not.toContain(
      "ring0:operators",
    );
  });
});

describe("grantSubjects", () => {
  it("a whole tenant is its tenant group", () => {
    expect(grantSubjects(grant())).toEqual([rbac("ring0:tenant:globex", "Group")]);
  });

  it("named users are <tenant>:<user>, once each, sorted", () => {
    expect(grantSubjects(grant({ grantees: [{ tenant: "globex", users: ["gus", "bea", "gus"] }] }))).toEqual([
      rbac("globex:bea", "User"),
      rbac("globex:gus", "User"),
    ]);
  });

  it("role groups are ring0:tenant:<tenant>:<role>s", () => {
    expect(
      grantSubjects(
        grant({ grantees: [{ tenant: "globex", groups: ["viewers", "admins", "members", "admins"] }] }),
      ),
    ).toEqual([
      rbac("ring0:tenant:globex:admins", "Group"),
      rbac("ring0:tenant:globex:members", "Group"),
      rbac("ring0:tenant:globex:viewers", "Group"),
    ]);
  });

  it("users and groups together, and no whole-tenant group then", () => {
    expect(
      grantSubjects(grant({ grantees: [{ tenant: "globex", users: ["gus"], groups: ["viewers"] }] })),
    ).toEqual([rbac("globex:gus", "User"), rbac("ring0:tenant:globex:viewers", "Group")]);
  });

  it("each grantee tenant in turn", () => {
    expect(
      grantSubjects(grant({ grantees: [{ tenant: "globex" }, { tenant: "initech", users: ["ian"] }] })),
    ).toEqual([rbac("ring0:tenant:globex", "Group"), rbac("initech:ian", "User")]);
  });

  it("skips a role group that is not one", () => {
    expect(grantSubjects(grant({ grantees: [{ tenant: "globex", groups: ["owners"] }] }))).toEqual([]);
  });

  it("the subjects name exactly the grantee identities the gateway impersonates for matching users", () => {
    const specs: SharingSpec["grantees"][] = [
      [{ tenant: "globex" }],
      [{ tenant: "globex", users: ["gus"] }],
      [{ tenant: "globex", groups: ["admins"] }],
      [{ tenant: "globex", groups: ["members", "viewers"] }],
      [{ tenant: "initech", users: ["gus"] }],
    ];
    const users = ["globex:gus", "globex:gina", "initech:gus", "gus"].flatMap((subject) =>
      (["tenant-admin", "tenant-member", "tenant-viewer"] as Ring0Role[]).map((role) => ({
        tenant: subject.startsWith("initech") ? "initech" : "globex",
        subject,
        role,
      })),
    );
    for (const grantees of specs) {
      const resource = grant({ grantees });
      const subjects = grantSubjects(resource) as { kind: string; name: string }[];
      for (const user of users) {
        const identity = granteeIdentity(user);
        expect(identity.groups).toContain(granteesGroup);
        const bound = subjects.some((subject) =>
          subject.kind === "User" ? subject.name === identity.user : identity.groups.includes(subject.name),
        );
        expect(bound, `${user.subject} (${user.role}) under ${JSON.stringify(grantees)}`).toBe(
          granteeMatches(resource.spec, user),
        );
      }
    }
  });
});

describe("grantRbacManifests", () => {
  const twoNamespaces = grant({
    grantees: [{ tenant: "globex", users: ["gus"] }],
    rules: [
      readPods,
      { namespaces: ["shared", "prod"], apiGroups: ["apps"], resources: ["deployments"], verbs: ["get"] },
      {
        namespaces: ["prod"],
        apiGroups: [""],
        resources: ["configmaps"],
        resourceNames: ["app"],
        verbs: ["get"],
      },
    ],
  });

  it("a Role and a RoleBinding per namespace, both named ring0:share:<grant>, namespaces sorted", () => {
    expect(manifests(twoNamespaces).map((m) => [m.kind, m.metadata.namespace, m.metadata.name])).toEqual([
      ["Role", "prod", "ring0:share:acme.debug"],
      ["RoleBinding", "prod", "ring0:share:acme.debug"],
      ["Role", "shared", "ring0:share:acme.debug"],
      ["RoleBinding", "shared", "ring0:share:acme.debug"],
    ]);
  });

  it("each Role holds only the rules for its namespace, without their namespaces", () => {
    const roles = manifests(twoNamespaces).filter((m) => m.kind === "Role");
    expect(roles.find((m) => m.metadata.namespace === "shared")?.rules).toEqual([
      { apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get"] },
    ]);
    expect(roles.find((m) => m.metadata.namespace === "prod")?.rules).toEqual([
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get"] },
      { apiGroups: [""], resources: ["configmaps"], resourceNames: ["app"], verbs: ["get"] },
    ]);
  });

  it("each RoleBinding binds its namespace's Role to the grant's subjects", () => {
    for (const binding of manifests(twoNamespaces).filter((m) => m.kind === "RoleBinding")) {
      expect(binding.roleRef).toEqual({
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name: "ring0:share:acme.debug",
      });
      expect(binding.subjects).toEqual([rbac("globex:gus", "User")]);
    }
  });

  it("everything carries Ring0's managed and protected labels, the grant and the owner", () => {
    for (const manifest of manifests(twoNamespaces)) {
      expect(manifest.metadata.labels).toEqual({
        ...managedLabels,
        [grantLabel]: "acme.debug",
        [ownerLabel]: "acme",
      });
      expect(manifest.metadata.labels[protectedLabel]).toBe("true");
      expect(manifest.metadata.labels["app.kubernetes.io/managed-by"]).toBe("ring0");
      expect(manifest.metadata.annotations["ring0.dev/purpose"]).toBe("debug the shared service");
    }
  });

  it("keeps the purpose annotation bounded", () => {
    const long = manifests(grant({ purpose: "x".repeat(5000) }));
    expect(long[0]?.metadata.annotations["ring0.dev/purpose"]).toHaveLength(1024);
  });

  it('makes nothing for "*" namespaces', () => {
    expect(manifests(grant({ rules: [{ ...readPods, namespaces: ["*"] }] }))).toEqual([]);
    expect(
      manifests(grant({ rules: [{ ...readPods, namespaces: ["*", "shared"] }] })).map(
        (m) => m.metadata.namespace,
      ),
    ).toEqual(["shared", "shared"]);
  });

  it("one Role per namespace even when rules repeat it", () => {
    const repeated = grant({ rules: [readPods, { ...readPods, resources: ["services"] }] });
    const roles = manifests(repeated).filter((m) => m.kind === "Role");
    expect(roles).toHaveLength(1);
    expect(roles[0]?.rules).toHaveLength(2);
  });

  describe("exec, attach and port-forward over WebSockets", () => {
    const roleRules = (rule: GrantRule) => manifests(grant({ rules: [rule] }))[0]?.rules;

    it("create on pods/exec also grants get on exactly pods/exec (kubectl's WebSocket exec is a GET)", () => {
      expect(
        roleRules({ ...readPods, resources: ["pods/exec"], resourceNames: ["web"], verbs: ["create"] }),
      ).toEqual([
        { apiGroups: [""], resources: ["pods/exec"], resourceNames: ["web"], verbs: ["create"] },
        { apiGroups: [""], resources: ["pods/exec"], resourceNames: ["web"], verbs: ["get"] },
      ]);
    });

    it("never widens get to the other resources of the rule", () => {
      expect(
        roleRules({ ...readPods, resources: ["pods", "pods/attach", "pods/portforward"], verbs: ["create"] }),
      ).toEqual([
        { apiGroups: [""], resources: ["pods", "pods/attach", "pods/portforward"], verbs: ["create"] },
        { apiGroups: [""], resources: ["pods/attach", "pods/portforward"], verbs: ["get"] },
      ]);
    });

    it("adds nothing when get is already granted, or create is not", () => {
      expect(roleRules({ ...readPods, resources: ["pods/exec"], verbs: ["get", "create"] })).toHaveLength(1);
      expect(roleRules({ ...readPods, resources: ["pods/log"], verbs: ["get"] })).toHaveLength(1);
      expect(roleRules({ ...readPods, resources: ["pods", "pods/log"], verbs: ["create"] })).toHaveLength(1);
    });
  });
});

/** What a tenant control plane serves, in part: core, apps, RBAC and a CRD. */
const served: NamespacedResource[] = [
  ...[
    "pods",
    "pods/log",
    "pods/exec",
    "pods/attach",
    "pods/portforward",
    "pods/proxy",
    "pods/ephemeralcontainers",
    "pods/status",
    "secrets",
    "configmaps",
    "serviceaccounts",
    "serviceaccounts/token",
    "services",
    "services/proxy",
    "events",
  ].map((resource) => ({ apiGroup: "", resource })),
  { apiGroup: "apps", resource: "deployments" },
  { apiGroup: "apps", resource: "deployments/scale" },
  { apiGroup: "rbac.authorization.k8s.io", resource: "roles" },
  { apiGroup: "rbac.authorization.k8s.io", resource: "rolebindings" },
  { apiGroup: "authorization.k8s.io", resource: "localsubjectaccessreviews" },
  { apiGroup: "example.com", resource: "widgets" },
];
const wildcards: SharingPolicyConfig = { ...defaultSharingPolicy, allowWildcards: true };
const everything: GrantRule = {
  namespaces: ["shared"],
  apiGroups: ["*"],
  resources: ["*"],
  verbs: ["get", "list"],
};
const reached = (rules: { apiGroups: string[]; resources: string[] }[]) =>
  rules
    .flatMap((rule) => rule.resources.map((resource) => `${rule.apiGroups[0] || "core"}:${resource}`))
    .sort();

describe("hasWildcard", () => {
  it('is "*" in groups, resources (also "*/sub") or verbs', () => {
    expect(hasWildcard(readPods)).toBe(false);
    expect(hasWildcard({ ...readPods, apiGroups: ["*"] })).toBe(true);
    expect(hasWildcard({ ...readPods, resources: ["*"] })).toBe(true);
    expect(hasWildcard({ ...readPods, resources: ["*/log"] })).toBe(true);
    expect(hasWildcard({ ...readPods, verbs: ["*"] })).toBe(true);
  });
});

describe("explicitRules (wildcard rules spelled out for the Role)", () => {
  it('"*" everything reaches each served namespaced resource above the floor and outside the policy\'s denials', () => {
    expect(reached(explicitRules(everything, served, wildcards))).toEqual([
      "apps:deployments",
      "apps:deployments/scale",
      "core:configmaps",
      "core:events",
      "core:pods",
      "core:pods/attach",
      "core:pods/exec",
      "core:pods/log",
      "core:pods/portforward",
      "core:pods/status",
      "core:serviceaccounts",
      "core:services",
      "example.com:widgets",
    ]);
  });

  it("never names Secrets, RBAC, token minting, proxies or ephemeral containers", () => {
    const names = reached(explicitRules({ ...everything, verbs: ["*"] }, served, wildcards));
    for (const never of [
      "core:secrets",
      "core:serviceaccounts/token",
      "core:pods/proxy",
      "core:services/proxy",
      "core:pods/ephemeralcontainers",
      "rbac.authorization.k8s.io:roles",
      "rbac.authorization.k8s.io:rolebindings",
      "authorization.k8s.io:localsubjectaccessreviews",
    ]) {
      expect(names).not.toContain(never);
    }
  });

  it('"*" verbs are the policy\'s allowed verbs, and workloads get no writes unless the policy allows them', () => {
    const rules = explicitRules({ ...everything, apiGroups: [""], verbs: ["*"] }, served, wildcards);
    const pods = rules.find((rule) => rule.resources.includes("pods"));
    expect(pods?.verbs).toEqual(["get", "list", "watch", "delete"]);
    const configmaps = rules.find((rule) => rule.resources.includes("configmaps"));
    expect(configmaps?.verbs).toEqual(wildcards.allowedVerbs);
    expect(rules.every((rule) => !rule.verbs.includes("*"))).toBe(true);
    const writes = explicitRules({ ...everything, apiGroups: [""], verbs: ["*"] }, served, {
      ...wildcards,
      allowWorkloadWrites: true,
    });
    expect(writes.find((rule) => rule.resources.includes("pods"))?.verbs).toEqual(wildcards.allowedVerbs);
  });

  it('never "*" verbs, even from a policy object that lists "*" among its allowed verbs', () => {
    const loose = { ...wildcards, allowedVerbs: ["get", "*"] } as unknown as SharingPolicyConfig;
    for (const verbs of [["*"], ["get", "*"]]) {
      const rules = explicitRules({ ...everything, verbs: verbs as GrantRule["verbs"] }, served, loose);
      expect(rules.length).toBeGreaterThan(0);
      expect(rules.every((rule) => rule.verbs.join() === "get")).toBe(true);
    }
  });

  it("pods/binding stays out: it is the floor's bindings by another path", () => {
    const rules = explicitRules(
      { ...everything, apiGroups: [""], resources: ["*/binding"], verbs: ["create"] },
      [...served, { apiGroup: "", resource: "pods/binding" }],
      wildcards,
    );
    expect(rules).toEqual([]);
  });

  it("verbs outside the policy's allowed verbs are dropped", () => {
    const rules = explicitRules(everything, served, { ...wildcards, allowedVerbs: ["get"] });
    expect(rules.every((rule) => rule.verbs.join() === "get")).toBe(true);
    expect(explicitRules(everything, served, { ...wildcards, allowedVerbs: ["watch"] })).toEqual([]);
  });

  it("denied API groups and resources stay out, subresources by their full name or their resource", () => {
    const policy = {
      ...wildcards,
      deniedApiGroups: ["example.com"],
      deniedResources: ["secrets", "pods/exec", "events"],
    };
    const names = reached(explicitRules(everything, served, policy));
    expect(names).not.toContain("example.com:widgets");
    expect(names).not.toContain("core:pods/exec");
    expect(names).not.toContain("core:events");
    expect(names).toContain("core:pods/log");
  });

  it("a wildcard in one place keeps the rest of the rule exact", () => {
    expect(reached(explicitRules({ ...everything, resources: ["pods"] }, served, wildcards))).toEqual([
      "core:pods",
    ]);
    expect(
      reached(explicitRules({ ...everything, apiGroups: [""], resources: ["*/log"] }, served, wildcards)),
    ).toEqual(["core:pods/log"]);
    expect(reached(explicitRules({ ...everything, apiGroups: ["apps"] }, served, wildcards))).toEqual([
      "apps:deployments",
      "apps:deployments/scale",
    ]);
  });

  it("a resource the control plane does not serve is not named", () => {
    expect(
      explicitRules({ ...everything, apiGroups: ["*"], resources: ["gadgets"] }, served, wildcards),
    ).toEqual([]);
  });
});

describe("grantRbacManifests with wildcard rules", () => {
  const roleRules = (rules: GrantRule[], expansion?: Parameters<typeof grantRbacManifests>[1]) =>
    (grantRbacManifests(grant({ rules }), expansion) as unknown as Manifest[]).find((m) => m.kind === "Role")
      ?.rules;

  it('spells them out against the served resources; the Role never holds "*"', () => {
    const rules = roleRules([everything], { served, policy: wildcards }) ?? [];
    expect(rules.length).toBeGreaterThan(0);
    expect(JSON.stringify(rules)).not.toContain('"*"');
  });

  it("without the served resources a wildcard rule gives no RBAC; exact rules are kept", () => {
    expect(roleRules([everything])).toEqual([]);
    expect(roleRules([everything, readPods])).toEqual([
      { apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list", "watch"] },
    ]);
  });

  it("resource names carry over to every spelled-out rule", () => {
    const rules =
      roleRules([{ ...everything, apiGroups: [""], resourceNames: ["web"] }], {
        served,
        policy: wildcards,
      }) ?? [];
    expect(rules.length).toBeGreaterThan(0);
    expect(rules.every((rule) => JSON.stringify(rule.resourceNames) === '["web"]')).toBe(true);
  });

  it("create on spelled-out connect subresources also gets get on exactly them (WebSocket exec)", () => {
    const rules = roleRules([{ ...everything, apiGroups: [""], resources: ["*/exec"], verbs: ["create"] }], {
      served,
      policy: wildcards,
    });
    expect(rules).toEqual([
      { apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] },
      { apiGroups: [""], resources: ["pods/exec"], verbs: ["get"] },
    ]);
  });
});
