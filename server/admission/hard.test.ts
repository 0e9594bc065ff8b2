import { describe, expect, it } from "vitest";
import { parseQuantity } from "@/server/core/quantity";
import { namespaceShare, tenantHardOf } from "./hard";
import { parseAdmissionReview } from "./webhook-server";

const quota = (namespace: string, hard: Record<string, string>, extra: object = {}) => ({
  metadata: { namespace, name: "q" },
  spec: { hard, ...extra },
});

describe("tenantHardOf", () => {
  it("keeps what Ring0 enforces and names what it leaves out", () => {
    expect(tenantHardOf({ cpu: "2", gpus: "1", pods: "1.5" })).toEqual({
      hard: { "requests.cpu": parseQuantity("2") },
      ignored: ["gpus", "pods"],
    });
  });
});

describe("namespaceShare", () => {
  const hard = { "requests.cpu": parseQuantity("2") };

  it("passes shares that fit, counting each namespace's tightest unscoped quota", () => {
    expect(
      namespaceShare(hard, [
        quota("a", { cpu: "1" }),
        quota("b", { "requests.cpu": "1" }),
        quota("b", { "requests.cpu": "5" }),
        quota("c", { "requests.cpu": "9" }, { scopes: ["BestEffort"] }),
      ]),
    ).toBeUndefined();
  });

  it("names the total, each namespace's share and the limit when they do not fit", () => {
    expect(namespaceShare(hard, [quota("a", { cpu: "1500m" }), quota("b", { "requests.cpu": "1" })])).toBe(
      "namespace quotas exceed the tenant quota: requests.cpu: the namespaces' quotas would add up to 2500m (a 1500m, b 1) but the tenant's quota is 2; lower a namespace's quota or ask an operator to raise the tenant's",
    );
  });
});

describe("parseAdmissionReview", () => {
  it("takes a v1 AdmissionReview and refuses anything else with a reason", () => {
    const request = {
      uid: "u1",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      operation: "CREATE",
    };
    expect(
      parseAdmissionReview({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request }).request
        .uid,
    ).toBe("u1");
    expect(() => parseAdmissionReview({ kind: "Pod" })).toThrow("not an AdmissionReview");
    expect(() => parseAdmissionReview({ apiVersion: "v2", kind: "AdmissionReview", request })).toThrow(
      "unsupported AdmissionReview version",
    );
    expect(() =>
      parseAdmissionReview({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: { ...request, uid: "" },
      }),
    ).toThrow("no uid");
  });
});
