import { describe, expect, it } from "vitest";
import {
  legacyApiPolicies,
  manifestList,
  notRing0ConditionName,
  notRing0Expression,
  protectedLabel,
  STATIC_SUFFIX,
  staticAdmissionPolicies,
} from "./admission-policies";

interface Policy {
  kind: string;
  metadata: { name: string };
  spec: {
    failurePolicy?: string;
    policyName?: string;
    validationActions?: string[];
    paramKind?: unknown;
    paramRef?: unknown;
    matchConstraints?: {
      resourceRules: { apiGroups: string[]; resources: string[]; operations: string[] }[];
    };
    matchConditions?: { name: string; expression: string }[];
    validations?: { expression: string; messageExpression: string }[];
    mutations?: { applyConfiguration: { expression: string } }[];
  };
}

const { validating, mutating } = staticAdmissionPolicies() as unknown as {
  validating: Policy[];
  mutating: Policy[];
};
const all = [...validating, ...mutating];
const find = (kind: string, name: string) => {
  const found = all.find(
    (policy) => policy.kind === kind && policy.metadata.name === `${name}${STATIC_SUFFIX}`,
  );
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};

describe("Ring0's admission policies from files", () => {
  it("names everything with the static suffix, binds every policy, and uses no params (files cannot)", () => {
    for (const object of all) {
      expect(object.metadata.name.endsWith(STATIC_SUFFIX)).toBe(true);
      expect(object.spec.paramKind).toBeUndefined();
      expect(object.spec.paramRef).toBeUndefined();
    }
    const policies = (list: Policy[], kind: string) =>
      list.filter((object) => object.kind === kind).map((object) => object.metadata.name);
    const bound = (list: Policy[], kind: string) =>
      list.filter((object) => object.kind === kind).map((object) => object.spec.policyName);
    expect(bound(validating, "ValidatingAdmissionPolicyBinding")).toEqual(
      policies(validating, "ValidatingAdmissionPolicy"),
    );
    expect(bound(mutating, "MutatingAdmissionPolicyBinding")).toEqual(
      policies(mutating, "MutatingAdmissionPolicy"),
    );
    for (const binding of validating.filter((object) => object.kind === "ValidatingAdmissionPolicyBinding"))
      expect(binding.spec.validationActions).toEqual(["Deny"]);
    // Every kind in its own file: the validating plugin reads only validating objects, and so on.
    expect(validating.every((object) => object.kind.startsWith("Validating"))).toBe(true);
    expect(mutating.every((object) => object.kind.startsWith("Mutating"))).toBe(true);
  });

  it("never applies to Ring0's own requests, and fails closed", () => {
    for (const policy of all.filter((object) => object.kind.endsWith("Policy"))) {
      expect(policy.spec.failurePolicy).toBe("Fail");
      expect(policy.spec.matchConditions?.[0]?.expression).toBe(notRing0Expression);
    }
  });

  it("guards objects labelled protected, on every resource (admission policies included)", () => {
    const policy = find("ValidatingAdmissionPolicy", "ring0-protect-managed");
    expect(policy.spec.matchConstraints?.resourceRules[0]).toMatchObject({
      apiGroups: ["*"],
      resources: ["*"],
    });
    expect(policy.spec.validations?.[0]?.expression).toContain("oldObject");
    expect(policy.spec.validations?.[0]?.expression).toContain(protectedLabel);
  });

  it("keeps tenant APIServices to the tenant's own groups, backed by a Service", () => {
    const expression = find("ValidatingAdmissionPolicy", "ring0-tenant-apiservices").spec.validations?.[0]
      ?.expression;
    for (const part of ["oldObject", "object.spec.service", ".k8s.io", ".kubernetes.io", "ring0.dev"])
      expect(expression).toContain(part);
  });

  it("adds Ring0's condition to every tenant webhook and policy, and refuses any without it", () => {
    for (const name of ["ring0-tenant-webhooks", "ring0-tenant-policies"]) {
      const mutation = find("MutatingAdmissionPolicy", name).spec.mutations?.[0]?.applyConfiguration
        .expression;
      expect(mutation).toContain(notRing0ConditionName);
      expect(mutation).toContain(JSON.stringify(notRing0Expression));
      const check = find("ValidatingAdmissionPolicy", name).spec.validations?.[0]?.expression;
      expect(check).toContain(`c.name == "${notRing0ConditionName}"`);
    }
    expect(
      find("ValidatingAdmissionPolicy", "ring0-tenant-policies").spec.matchConstraints?.resourceRules[0]
        ?.resources,
    ).toEqual(["validatingadmissionpolicies", "mutatingadmissionpolicies"]);
  });

  it("writes a List document and knows the API objects it replaces", () => {
    expect(JSON.parse(manifestList(validating as never))).toMatchObject({ apiVersion: "v1", kind: "List" });
    expect(legacyApiPolicies.flatMap((entry) => entry.names)).toContain("ring0-protect-managed");
  });
});
