import { describe, expect, it } from "vitest";
import { FakeClock } from "@/server/controllers/clock";
import { approvalAnnotations, automaticApprover, policyViolations } from "./approval";
import { grantState, isLive } from "./grants";
import { defaultSharingPolicy } from "./policy";
import {
  approvedCondition,
  buildSharingStatus,
  ownerUnavailable,
  policyCondition,
  rbacAppliedCondition,
  rbacRemovedCondition,
  readyCondition,
  type SharingObserved,
  stateChangeEvent,
  statusEvents,
} from "./status";
import type { SharingPolicyResource, SharingStatus } from "./types";

const now = new Date("2026-11-21T12:00:00Z");
const later = new Date("2026-11-21T12:05:00Z");

const observed = (overrides: Partial<SharingObserved> = {}): SharingObserved => ({
  generation: 3,
  decision: { state: "Active", reason: "Approved", message: "Approved by Ring0." },
  approved: { status: "True", reason: "Approved", message: "Approved by Ring0." },
  policy: { status: "True", reason: "WithinPolicy", message: "Within policy." },
  rbac: { status: "True", reason: "Applied", message: "Applied." },
  ...overrides,
});

describe("buildSharingStatus", () => {
  it("writes the state and the four conditions with observedGeneration", () => {
    const status = buildSharingStatus(undefined, observed(), now);
    expect(status.state).toBe("Active");
    expect(status.conditions?.map((condition) => [condition.type, condition.status])).toEqual([
      ["Approved", "True"],
      ["PolicyCompliant", "True"],
      ["RBACApplied", "True"],
      ["Ready", "True"],
    ]);
    expect(status.conditions?.every((condition) => condition.observedGeneration === 3)).toBe(true);
  });

  it("keeps lastUsedAt and conditions other writers added", () => {
    const previous = {
      lastUsedAt: "2026-11-21T11:59:00Z",
      conditions: [
        {
          type: "Audited",
          status: "True" as const,
          reason: "Seen",
          message: "",
          lastTransitionTime: "2026-11-20T00:00:00Z",
        },
      ],
    };
    const status = buildSharingStatus(previous, observed(), now);
    expect(status.lastUsedAt).toBe("2026-11-21T11:59:00Z");
    expect(status.conditions?.at(-1)?.type).toBe("Audited");
  });

  it("moves lastTransitionTime only when a condition's status flips", () => {
    const first = buildSharingStatus(undefined, observed(), now);
    const same = buildSharingStatus(
      first,
      observed({ rbac: { status: "True", reason: "Applied", message: "Other." } }),
      later,
    );
    expect(same.conditions?.find((c) => c.type === "RBACApplied")?.lastTransitionTime).toBe(
      now.toISOString(),
    );
    const revoked = buildSharingStatus(
      first,
      observed({
        decision: { state: "Revoked", reason: "Revoked", message: "Revoked by ops at then." },
        rbac: { status: "False", reason: "Removed", message: "Removed." },
      }),
      later,
    );
    expect(revoked.state).toBe("Revoked");
    expect(revoked.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "Revoked",
      lastTransitionTime: later.toISOString(),
    });
  });
});

describe("readyCondition", () => {
  it("names the policy when a pending grant breaks it", () => {
    const ready = readyCondition(
      observed({
        decision: { state: "PendingApproval", reason: "AwaitingApproval", message: "Waiting." },
        policy: {
          status: "False",
          reason: "BeyondPolicy",
          message: "The grant breaks the sharing policy: x.",
        },
      }),
    );
    expect(ready).toMatchObject({ status: "False", reason: "BeyondPolicy" });
    expect(ready.message).toContain("breaks the sharing policy");
  });

  it("reports a revoked grant as revoked even when it is beyond policy too", () => {
    const ready = readyCondition(
      observed({
        decision: { state: "Revoked", reason: "Revoked", message: "Revoked by ops at then." },
        policy: { status: "False", reason: "BeyondPolicy", message: "Breaks it." },
      }),
    );
    expect(ready).toMatchObject({ status: "False", reason: "Revoked" });
  });

  it("says why an active grant is not in force", () => {
    expect(
      readyCondition(observed({ blocked: { reason: "ControlPlaneUnavailable", message: "Not serving." } })),
    ).toEqual({ status: "False", reason: "ControlPlaneUnavailable", message: "Not serving." });
    expect(
      readyCondition(observed({ rbac: { status: "False", reason: "NamespaceMissing", message: "No ns." } })),
    ).toEqual({ status: "False", reason: "NamespaceMissing", message: "No ns." });
  });
});

describe("stateChangeEvent", () => {
  it("is emitted only when the state changes, as a warning for a grant beyond policy", () => {
    expect(stateChangeEvent("Active", observed())).toBeNull();
    expect(stateChangeEvent(undefined, observed())).toMatchObject({ type: "Normal", reason: "Active" });
    expect(
      stateChangeEvent(
        undefined,
        observed({
          decision: { state: "PendingApproval", reason: "AwaitingApproval", message: "Waiting." },
          policy: { status: "False", reason: "BeyondPolicy", message: "Breaks it." },
        }),
      ),
    ).toEqual({ type: "Warning", reason: "BeyondPolicy", message: "Breaks it." });
  });
});

describe("rbacAppliedCondition", () => {
  const outcome = {
    name: "ring0-share-acme-to-globex",
    namespaces: ["shared", "web"],
    missing: [],
    refused: [],
    undiscovered: [],
  };

  it("names the Roles' namespaces, and the API groups wildcards do not cover yet", () => {
    expect(rbacAppliedCondition(outcome)).toEqual({
      status: "True",
      reason: "Applied",
      message:
        'Role and RoleBinding "ring0-share-acme-to-globex" are in namespaces "shared", "web" of the owner\'s control plane.',
    });
    expect(
      rbacAppliedCondition({ ...outcome, namespaces: ["shared"], undiscovered: ["metrics.k8s.io"] }).message,
    ).toBe(
      'Role and RoleBinding "ring0-share-acme-to-globex" are in namespace "shared" of the owner\'s control plane. The wildcard rules do not cover the API groups whose discovery failed (metrics.k8s.io) until it answers again.',
    );
  });

  it("says which namespaces are missing and where it did apply; a refusal outranks both", () => {
    expect(rbacAppliedCondition({ ...outcome, missing: ["web"] })).toEqual({
      status: "False",
      reason: "NamespaceMissing",
      message:
        'The owner tenant has no namespace "web": nothing is shared there until it exists. Applied in "shared".',
    });
    expect(
      rbacAppliedCondition({
        ...outcome,
        missing: ["web"],
        refused: ['Role "x" in namespace "shared": forbidden'],
      }),
    ).toMatchObject({ status: "False", reason: "Refused" });
  });
});

describe("a grant's status over time, with a fake clock", () => {
  const clock = new FakeClock(Date.parse("2026-11-21T12:00:00Z"));
  const at = () => new Date(clock.now());
  const policy = { ...defaultSharingPolicy, requireApproval: false };
  const pending: SharingPolicyResource = {
    apiVersion: "ring0.dev/v1alpha1",
    kind: "SharingPolicy",
    metadata: { name: "acme-to-globex", uid: "uid-1", generation: 1 },
    spec: {
      ownerTenant: "acme",
      grantees: [{ tenant: "globex" }],
      rules: [{ namespaces: ["shared"], apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }],
      expiresAt: "2026-11-21T13:00:00Z",
      purpose: "debugging",
    },
  };
  const approved: SharingPolicyResource = {
    ...pending,
    metadata: { ...pending.metadata, annotations: approvalAnnotations(pending, automaticApprover, at()) },
  };
  const applied = rbacAppliedCondition({
    name: "ring0-share",
    namespaces: ["shared"],
    missing: [],
    refused: [],
    undiscovered: [],
  });
  const observe = (grant: SharingPolicyResource, rest: Partial<SharingObserved> = {}): SharingObserved => {
    const violations = policyViolations(grant, policy, at());
    return {
      generation: grant.metadata.generation,
      decision: grantState(grant, at()),
      approved: approvedCondition(grant, violations),
      policy: policyCondition(violations),
      rbac: applied,
      ...rest,
    };
  };

  it("goes PendingApproval → Active → blocked (owner not serving) → Active → Expired", () => {
    let previous: SharingStatus = {};
    const step = (observed: SharingObserved) => {
      const status = buildSharingStatus(previous, observed, at());
      const events = statusEvents(previous, observed);
      previous = status;
      return { status, events };
    };
    const ready = (status: SharingStatus) =>
      status.conditions?.find((condition) => condition.type === "Ready");

    const first = step(observe(pending, { rbac: rbacRemovedCondition(grantState(pending, at())) }));
    expect(first.status.state).toBe("PendingApproval");
    expect(first.events.map((event) => event.reason)).toEqual(["PendingApproval"]);

    clock.advance(1_000);
    const active = step(observe(approved));
    expect(active.status.state).toBe("Active");
    expect(ready(active.status)).toMatchObject({
      status: "True",
      lastTransitionTime: "2026-11-21T12:00:01.000Z",
    });
    expect(active.events).toEqual([
      { type: "Normal", reason: "Active", message: `Approved by ${automaticApprover}.` },
    ]);

    clock.advance(60_000);
    const owner = { gone: false, message: "The control plane is starting." };
    const blocked = step(observe(approved, ownerUnavailable(owner, isLive(approved, at()))));
    expect(blocked.status.state).toBe("Active");
    expect(ready(blocked.status)).toMatchObject({
      status: "False",
      reason: "ControlPlaneUnavailable",
      message: "The control plane is starting. The grant takes effect once it serves.",
      lastTransitionTime: "2026-11-21T12:01:01.000Z",
    });
    expect(blocked.events).toEqual([]);

    clock.advance(5_000);
    const back = step(observe(approved));
    expect(ready(back.status)).toMatchObject({
      status: "True",
      lastTransitionTime: "2026-11-21T12:01:06.000Z",
    });
    // The Approved condition held all along: its transition time is the first one.
    expect(
      back.status.conditions?.find((condition) => condition.type === "Approved")?.lastTransitionTime,
    ).toBe("2026-11-21T12:00:01.000Z");

    clock.advance(60 * 60_000);
    const decision = grantState(approved, at());
    const expired = step(observe(approved, { rbac: rbacRemovedCondition(decision) }));
    expect(expired.status.state).toBe("Expired");
    expect(ready(expired.status)).toMatchObject({ status: "False", reason: "Expired" });
    expect(expired.events).toEqual([
      { type: "Normal", reason: "Expired", message: "Expired at 2026-11-21T13:00:00.000Z." },
    ]);
  });

  it("warns about refused RBAC once, not at every resync", () => {
    const refused = {
      status: "False" as const,
      reason: "Refused",
      message: "The owner's control plane refused the grant's RBAC: no.",
    };
    const observed = observe(approved, {
      decision: { state: "Active", reason: "Approved", message: "Approved." },
      rbac: refused,
    });
    const first = buildSharingStatus({ state: "Active" }, observed, at());
    expect(statusEvents({ state: "Active" }, observed)).toEqual([
      { type: "Warning", reason: "RBACRefused", message: refused.message },
    ]);
    expect(statusEvents(first, observed)).toEqual([]);
  });
});
