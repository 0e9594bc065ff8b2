import { describe, expect, it } from "vitest";
import { protectedLabel, reservedGroups, tenantAdminClusterRole, tenantDefaultManifests } from "./defaults";

const manifests = tenantDefaultManifests({
  tenant: "acme",
  admins: ["alice", "alice"],
  customGroups: ["example.com", "apps", "x.k8s.io"],
});
const byName = (kind: string, name: string) =>
  manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name) as Record<
    string,
    unknown
  > & {
    metadata: { labels?: Record<string, string> };
  };

describe("tenant defaults", () => {
  it("binds each Ring0 role group to its role, plus the Tenant's named admins", () => {
    expect(byName("ClusterRoleBinding", "ring0:tenant-admins")).toMatchObject({
      roleRef: { name: tenantAdminClusterRole },
      subjects: [
        { kind: "Group", name: "ring0:tenant:acme:admins" },
        { kind: "User", name: "acme:alice" },
      ],
    });
    expect(byName("ClusterRoleBinding", "ring0:tenant-members")).toMatchObject({
      roleRef: { name: "edit" },
      subjects: [{ kind: "Group", name: "ring0:tenant:acme:members" }],
    });
    expect(byName("ClusterRoleBinding", "ring0:tenant-viewers")).toMatchObject({ roleRef: { name: "view" } });
  });

  it("never grants '*' verbs (bind/escalate) nor write access to groups that configure the shared world", () => {
    const role = byName("ClusterRole", tenantAdminClusterRole) as unknown as {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    for (const rule of role.rules) {
      // "*" only on proxying to their own pods and Services (an OPTIONS request has no verb).
      if (rule.verbs.includes("*")) expect(rule.resources).toEqual(["pods/proxy", "services/proxy"]);
      else expect(rule.verbs).not.toContain("*");
      expect(rule.verbs).not.toContain("bind");
      expect(rule.verbs).not.toContain("escalate");
      expect(rule.verbs).not.toContain("impersonate");
      if (rule.verbs.includes("create")) {
        // A certificate signed by the tenant's CA could name any user and group (system:masters).
        expect(rule.apiGroups).not.toContain("certificates.k8s.io");
        expect(rule.apiGroups).not.toContain("*");
        if (rule.apiGroups.includes("")) expect(rule.resources).not.toContain("nodes");
      }
    }
    // Custom groups from the tenant's CRDs get rights; built-in and *.k8s.io groups never through that path.
    const custom = role.rules.find((rule) => rule.apiGroups.includes("example.com"));
    expect(custom?.apiGroups).toEqual(["example.com"]);
    expect(reservedGroups).toContain("admissionregistration.k8s.io");
    // Webhooks, admission policies and APIServices, as a cluster admin has them: their calls pass
    // the egress wall, and Ring0's policies from files keep them off Ring0's requests.
    const writable = (group: string) =>
      role.rules
        .filter((rule) => rule.apiGroups.includes(group) && rule.verbs.includes("delete"))
        .flatMap((rule) => rule.resources);
    expect(writable("admissionregistration.k8s.io")).toEqual(["*"]);
    expect(writable("apiregistration.k8s.io")).toEqual(["*"]);
    // Dynamic resource allocation objects are the tenant's own (no claim is carried below), but no
    // CRD may take their group.
    expect(writable("resource.k8s.io")).toEqual(["*"]);
    // Storage, priority and runtime classes are the tenant's own (inert below).
    for (const inert of ["storage.k8s.io", "scheduling.k8s.io", "node.k8s.io"])
      expect(writable(inert)).toEqual(["*"]);
    expect(reservedGroups).toContain("resource.k8s.io");
  });

  it("labels every Ring0 object protected, and holds no admission policy (those come from files)", () => {
    for (const manifest of manifests.filter((candidate) => candidate.kind !== "Namespace")) {
      expect(manifest.metadata.labels?.[protectedLabel]).toBe("true");
    }
    expect(manifests.filter((manifest) => manifest.kind.includes("AdmissionPolicy"))).toEqual([]);
  });

  it("ensures the standard namespaces first", () => {
    expect(manifests.slice(0, 3).map((manifest) => manifest.metadata.name)).toEqual([
      "default",
      "kube-system",
      "kube-public",
    ]);
  });
});
