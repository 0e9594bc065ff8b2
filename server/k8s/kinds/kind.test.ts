import { describe, expect, it } from "vitest";
import { LeaseKind } from "./cluster-kinds";
import { groupVersionPath } from "./kind";
import { NamespaceKind } from "./namespace";
import { NodeKind } from "./node";
import { PodKind } from "./pod";
import { ClusterRoleBindingKind } from "./rbac";

describe("kind paths", () => {
  it("spells core and group paths for collections, objects and subresources", () => {
    expect(PodKind.path()).toBe("/api/v1/pods");
    expect(PodKind.path({ namespace: "team-a" })).toBe("/api/v1/namespaces/team-a/pods");
    expect(PodKind.path({ namespace: "team-a", name: "web", subresource: "log" })).toBe(
      "/api/v1/namespaces/team-a/pods/web/log",
    );
    expect(NodeKind.path({ name: "n1", subresource: "status" })).toBe("/api/v1/nodes/n1/status");
    expect(NamespaceKind.path({ name: "default" })).toBe("/api/v1/namespaces/default");
    expect(LeaseKind.path({ namespace: "ring0-system", name: "syncer" })).toBe(
      "/apis/coordination.k8s.io/v1/namespaces/ring0-system/leases/syncer",
    );
    expect(ClusterRoleBindingKind.path({ name: "ring0:tenant-admins" })).toBe(
      "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/ring0%3Atenant-admins",
    );
    expect(groupVersionPath("ring0.dev/v1alpha1")).toBe("/apis/ring0.dev/v1alpha1");
  });

  it("encodes names so a name cannot step into another path", () => {
    expect(PodKind.path({ namespace: "a/../b", name: "x?y" })).toBe(
      "/api/v1/namespaces/a%2F..%2Fb/pods/x%3Fy",
    );
  });

  it("refuses a namespace for a cluster-scoped kind and a subresource without a name", () => {
    expect(() => NodeKind.path({ namespace: "x" })).toThrow(/Node is not namespaced/);
    expect(() => PodKind.path({ namespace: "x", subresource: "log" })).toThrow(/needs a name/);
  });
});
