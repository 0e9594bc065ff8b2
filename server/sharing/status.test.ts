import { describe, expect, it } from "vitest";
import { buildSharingStatus, readyCondition, type SharingObserved, stateChangeEvent } from "./status";

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
