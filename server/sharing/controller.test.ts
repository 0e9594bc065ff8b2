import { describe, expect, it } from "vitest";
import { K8sError } from "@/server/k8s/errors";
import {
  approvalAnnotations,
  approvesAutomatically,
  automaticApprover,
  inForce,
  policyViolations,
} from "./approval";
import { changedGrants, sharingTrigger } from "./controller";
import { grantState, specHash } from "./grants";
import { isLabelValue, isMissingNamespace, isRefusal, rbacByGrant, staleRbac } from "./owner-rbac";
import { defaultSharingPolicy } from "./policy";
import { grantRbacManifests } from "./rbac";
import { requeueAfterMs } from "./reconciler";
import { approvedCondition } from "./status";
import { type SharingPolicyResource, sharingAnnotations } from "./types";

const now = new Date("2026-11-21T12:00:00Z");

function grant(
  overrides: Partial<SharingPolicyResource["spec"]> = {},
  metadata: Partial<SharingPolicyResource["metadata"]> = {},
): SharingPolicyResource {
  return {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "SharingPolicy",
    metadata: { name: "acme-to-globex", uid: "uid-1", generation: 1, ...metadata },
    spec: {
      ownerTenant: "acme",
      grantees: [{ tenant: "globex" }],
      rules: [
        { namespaces: ["shared"], apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list"] },
      ],
      expiresAt: "2026-11-28T12:00:00Z",
      purpose: "debugging",
      ...overrides,
    },
  };
}

const approved = (value: SharingPolicyResource) => ({
  ...value,
  metadata: { ...value.metadata, annotations: approvalAnnotations(value, automaticApprover, now) },
});

describe("sharingTrigger and changedGrants", () => {
  it("enqueues spec edits, approvals, revocations, deletions and vanished grants, not status writes", () => {
    const base = grant();
    const before = new Map(
      ["a", "b", "c", "d", "gone"].map((name) => [
        name,
        sharingTrigger({ ...base, metadata: { ...base.metadata, name } }),
      ]),
    );
    const named = (name: string, extra: Partial<SharingPolicyResource["metadata"]> = {}) => ({
      ...base,
      metadata: { ...base.metadata, name, ...extra },
    });
    const current = [
      { ...named("a"), status: { state: "Active" as const, lastUsedAt: "2026-11-21T11:00:00Z" } },
      named("b", { generation: 2 }),
      named("c", { annotations: { [sharingAnnotations.revokedAt]: "2026-11-21T11:00:00Z" } }),
      named("d", { deletionTimestamp: "2026-11-21T11:00:00Z" }),
      named("new"),
    ];
    expect(changedGrants(before, current).sort()).toEqual(["b", "c", "d", "gone", "new"]);
  });
});

describe("staleRbac", () => {
  it("keeps what the grant still covers and deletes the rest, RoleBindings first", () => {
    const now2 = grantRbacManifests(grant());
    const before = grantRbacManifests(
      grant({ rules: [{ ...grant().spec.rules[0]!, namespaces: ["shared", "old"] }] }),
    );
    const stale = staleRbac(now2, before);
    expect(stale.map((object) => `${object.kind}/${object.metadata.namespace}`)).toEqual([
      "RoleBinding/old",
      "Role/old",
    ]);
    expect(staleRbac([], now2).map((object) => object.kind)).toEqual(["RoleBinding", "Role"]);
    expect(staleRbac(now2, now2)).toEqual([]);
  });
});

describe("rbacByGrant", () => {
  it("groups share RBAC by the grant its label names", () => {
    const objects = [...grantRbacManifests(grant()), ...grantRbacManifests(grant({}, { name: "other" }))];
    const byGrant = rbacByGrant(objects);
    expect([...byGrant.keys()].sort()).toEqual(["acme-to-globex", "other"]);
    expect(byGrant.get("other")?.map((object) => object.kind)).toEqual(["Role", "RoleBinding"]);
  });
});

describe("requeueAfterMs", () => {
  it("comes back one second after the expiry when that is before the resync", () => {
    expect(requeueAfterMs(grant({ expiresAt: "2026-11-21T12:00:10Z" }), now, 300_000)).toBe(11_000);
    expect(requeueAfterMs(grant(), now, 300_000)).toBe(300_000);
    expect(requeueAfterMs(grant({ expiresAt: undefined }), now, 300_000)).toBe(300_000);
    expect(requeueAfterMs(grant({ expiresAt: "2026-11-21T11:00:00Z" }), now, 300_000)).toBe(300_000);
  });
});

describe("approval", () => {
  it("approves a pending grant within policy when operators do not require approval", () => {
    const pending = grant();
    const violations = policyViolations(pending, defaultSharingPolicy, now);
    expect(violations).toEqual([]);
    expect(approvesAutomatically(grantState(pending, now), defaultSharingPolicy, violations)).toBe(true);
    expect(
      approvesAutomatically(
        grantState(pending, now),
        { ...defaultSharingPolicy, requireApproval: true },
        violations,
      ),
    ).toBe(false);
    const annotations = approvalAnnotations(pending, automaticApprover, now);
    expect(annotations[sharingAnnotations.approvedSpec]).toBe(specHash(pending.spec));
    expect(grantState(approved(pending), now).state).toBe("Active");
    expect(approvedCondition(approved(pending), [])).toMatchObject({ status: "True", reason: "Approved" });
  });

  it("leaves a grant beyond policy pending, saying why", () => {
    const secrets = grant({
      rules: [{ namespaces: ["shared"], apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
    });
    const violations = policyViolations(secrets, defaultSharingPolicy, now);
    expect(violations.map((violation) => violation.rule)).toEqual(["deniedResources"]);
    expect(approvesAutomatically(grantState(secrets, now), defaultSharingPolicy, violations)).toBe(false);
    expect(approvedCondition(secrets, violations)).toMatchObject({ status: "False", reason: "BeyondPolicy" });
  });

  it("gives RBAC to a live grant only while it is within policy, approved or not", () => {
    const live = approved(grant());
    expect(inForce(live, policyViolations(live, defaultSharingPolicy, now), now)).toBe(true);
    const secrets = approved(
      grant({ rules: [{ namespaces: ["shared"], apiGroups: [""], resources: ["secrets"], verbs: ["get"] }] }),
    );
    expect(grantState(secrets, now).state).toBe("Active");
    expect(inForce(secrets, policyViolations(secrets, defaultSharingPolicy, now), now)).toBe(false);
    expect(inForce(grant(), [], now)).toBe(false);
  });

  it("does not call an expired grant's expiry a policy violation", () => {
    const expired = approved(grant({ expiresAt: "2026-11-21T11:59:00Z" }));
    expect(grantState(expired, now).state).toBe("Expired");
    expect(policyViolations(expired, defaultSharingPolicy, now)).toEqual([]);
  });

  it("needs approving again after an edit", () => {
    const edited = { ...approved(grant()), spec: { ...grant().spec, purpose: "more" } };
    expect(approvedCondition(edited, [])).toMatchObject({ status: "False", reason: "ChangedSinceApproval" });
  });
});

describe("errors", () => {
  it("tells a missing namespace, a refusal and a failure apart", () => {
    const missing = new K8sError({
      status: 404,
      reason: "NotFound",
      message: 'namespaces "shared" not found',
      details: { name: "shared", kind: "namespaces" },
    });
    const invalid = new K8sError({ status: 422, reason: "Invalid", message: "Role is invalid" });
    const down = new K8sError({ status: 503, reason: "ServiceUnavailable", message: "down" });
    expect(isMissingNamespace(missing)).toBe(true);
    expect(isMissingNamespace(invalid)).toBe(false);
    expect(isRefusal(invalid)).toBe(true);
    expect(isRefusal(down)).toBe(false);
  });

  it("knows which grant names can be label values", () => {
    expect(isLabelValue("acme-to-globex")).toBe(true);
    expect(isLabelValue("x".repeat(64))).toBe(false);
  });
});
