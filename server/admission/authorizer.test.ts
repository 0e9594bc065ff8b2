import { describe, expect, it } from "vitest";
import { kubeUserName, roleGroup } from "@/server/tenants/kube-identity";
import { allowsCustomGroupAccess, BadAccessReview, parseAccessReview } from "./authorizer";

const admin = { user: "acme:mallory", groups: [roleGroup("acme", "admin"), "system:authenticated"] };
const on = (group: string, verb = "create") => ({ resourceAttributes: { group, resource: "things", verb } });

describe("Ring0's authorization webhook", () => {
  it("allows tenant admins every named verb in custom groups", () => {
    for (const verb of ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"])
      expect(allowsCustomGroupAccess("acme", { ...admin, ...on("widgets.example.com", verb) }, [])).toBe(
        true,
      );
  });

  it("has no opinion on RBAC's own verbs, reserved, built-in or Kubernetes groups, or non-resource paths", () => {
    for (const verb of ["bind", "escalate", "impersonate", "*", "approve"])
      expect(allowsCustomGroupAccess("acme", { ...admin, ...on("widgets.example.com", verb) }, [])).toBe(
        false,
      );
    for (const group of [
      "",
      "apps",
      "extensions",
      "ring0.dev",
      "metrics.ring0.dev",
      "flowcontrol.apiserver.k8s.io",
      "snapshot.storage.k8s.io",
      "x.kubernetes.io",
      "admissionregistration.k8s.io",
    ])
      expect(allowsCustomGroupAccess("acme", { ...admin, ...on(group) }, []), group).toBe(false);
    expect(
      allowsCustomGroupAccess(
        "acme",
        { ...admin, nonResourceAttributes: { path: "/metrics", verb: "get" } },
        [],
      ),
    ).toBe(false);
  });

  it("takes admins by the tenant's own admin group or the Tenant's named admins, nobody else", () => {
    const request = on("widgets.example.com");
    expect(
      allowsCustomGroupAccess("acme", { user: "x", groups: [roleGroup("globex", "admin")], ...request }, []),
    ).toBe(false);
    expect(
      allowsCustomGroupAccess("acme", { user: "x", groups: [roleGroup("acme", "member")], ...request }, []),
    ).toBe(false);
    const carol = { user: kubeUserName("acme", "carol"), groups: [], ...request };
    expect(allowsCustomGroupAccess("acme", carol, [])).toBe(false);
    expect(allowsCustomGroupAccess("acme", carol, ["carol"])).toBe(true);
    expect(allowsCustomGroupAccess("globex", carol, ["carol"])).toBe(false);
  });

  it("parses SubjectAccessReviews and says what is wrong with anything else", () => {
    expect(
      parseAccessReview({ apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec: admin })
        .spec,
    ).toEqual(admin);
    for (const body of [
      null,
      { kind: "AdmissionReview" },
      { apiVersion: "v2", kind: "SubjectAccessReview", spec: {} },
      { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview" },
      { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec: { groups: [1] } },
    ])
      expect(() => parseAccessReview(body)).toThrow(BadAccessReview);
  });
});
