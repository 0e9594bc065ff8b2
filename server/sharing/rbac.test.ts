import { describe, expect, it } from "vitest";
import type { Ring0Role } from "@/server/auth/roles";
import { managedLabels, protectedLabel } from "@/server/tenants/defaults";
import { granteeIdentity, granteesGroup } from "@/server/tenants/kube-identity";
import { granteeMatches } from "./grants";
import { grantRbacManifests, grantRbacName, grantSubjects } from "./rbac";
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

    it('a "*" resource with create gets get on "*/exec", "*/attach" and "*/portforward"', () => {
      expect(roleRules({ ...readPods, resources: ["*"], verbs: ["create"] })?.[1]).toEqual({
        apiGroups: [""],
        resources: ["*/exec", "*/attach", "*/portforward"],
        verbs: ["get"],
      });
    });

    it("adds nothing when get is already granted, or create is not", () => {
      expect(roleRules({ ...readPods, resources: ["pods/exec"], verbs: ["get", "create"] })).toHaveLength(1);
      expect(roleRules({ ...readPods, resources: ["pods/exec"], verbs: ["*"] })).toHaveLength(1);
      expect(roleRules({ ...readPods, resources: ["pods/log"], verbs: ["get"] })).toHaveLength(1);
      expect(roleRules({ ...readPods, resources: ["pods", "pods/log"], verbs: ["create"] })).toHaveLength(1);
    });
  });
});
