import { describe, expect, it } from "vitest";
import { buildStatus, type Observed, setCondition } from "./status";

const t0 = new Date("2026-11-21T10:00:00Z");
const t1 = new Date("2026-11-21T10:00:05Z");

const starting: Observed = {
  phase: "Provisioning",
  generation: 1,
  provisioner: "local",
  createdAt: "2026-11-21T09:59:58.000Z",
  controlPlane: { status: "False", reason: "Starting", message: "The control plane is starting." },
  defaults: { status: "False", reason: "WaitingForControlPlane", message: "later" },
};
const ready: Observed = {
  ...starting,
  phase: "Ready",
  endpoint: "https://127.0.0.1:1234",
  version: "v1.36.4",
  controlPlane: { status: "True", reason: "Running", message: "Serving." },
  defaults: { status: "True", reason: "Applied", message: "Applied." },
};

describe("setCondition", () => {
  it("keeps lastTransitionTime while the status holds and moves it when the status flips", () => {
    const first = setCondition(
      undefined,
      { type: "Ready", status: "False", reason: "A", message: "a" },
      t0,
      1,
    );
    const same = setCondition(first, { type: "Ready", status: "False", reason: "B", message: "b" }, t1, 2);
    expect(same[0]).toMatchObject({
      reason: "B",
      message: "b",
      observedGeneration: 2,
      lastTransitionTime: t0.toISOString(),
    });
    const flipped = setCondition(
      same,
      { type: "Ready", status: "True", reason: "Ready", message: "ok" },
      t1,
      2,
    );
    expect(flipped[0]?.lastTransitionTime).toBe(t1.toISOString());
  });

  it("orders the documented types first and keeps conditions other writers added", () => {
    let list = setCondition(
      undefined,
      { type: "Ready", status: "True", reason: "R", message: "" },
      t0,
      undefined,
    );
    list = [
      ...list,
      { type: "Synced", status: "True", reason: "S", message: "", lastTransitionTime: t0.toISOString() },
    ];
    list = setCondition(
      list,
      { type: "ControlPlaneReady", status: "True", reason: "R", message: "" },
      t0,
      undefined,
    );
    expect(list.map((condition) => condition.type)).toEqual(["ControlPlaneReady", "Ready", "Synced"]);
  });
});

describe("buildStatus", () => {
  it("is not Ready until the control plane serves and its defaults are applied, and says why", () => {
    const status = buildStatus(undefined, starting, t0);
    expect(status.phase).toBe("Provisioning");
    expect(status.conditions?.find((condition) => condition.type === "Ready")).toMatchObject({
      status: "False",
      reason: "Starting",
    });
    const waitingForDefaults = buildStatus(
      status,
      { ...ready, phase: "Provisioning", defaults: starting.defaults },
      t1,
    );
    expect(waitingForDefaults.conditions?.find((condition) => condition.type === "Ready")).toMatchObject({
      status: "False",
      reason: "WaitingForControlPlane",
    });
    expect(status.timings).toMatchObject({
      createdAt: starting.createdAt,
      provisioningStartedAt: t0.toISOString(),
    });
  });

  it("records readyAt once and lastReadyAt on every return to Ready", () => {
    const first = buildStatus(buildStatus(undefined, starting, t0), ready, t1);
    expect(first).toMatchObject({
      phase: "Ready",
      endpoint: ready.endpoint,
      version: "v1.36.4",
      observedGeneration: 1,
    });
    expect(first.timings).toMatchObject({ readyAt: t1.toISOString(), lastReadyAt: t1.toISOString() });
    const suspended = buildStatus(
      first,
      { ...starting, phase: "Suspended" },
      new Date("2026-11-21T11:00:00Z"),
    );
    const resumedAt = new Date("2026-11-21T12:00:00Z");
    const resumed = buildStatus(suspended, ready, resumedAt);
    expect(resumed.timings).toMatchObject({
      readyAt: t1.toISOString(),
      lastReadyAt: resumedAt.toISOString(),
    });
    // A steady Ready reconcile changes nothing.
    expect(buildStatus(resumed, ready, new Date("2026-11-21T13:00:00Z"))).toEqual(resumed);
  });

  it("keeps Ready False with its own reason when blocked, though the control plane serves", () => {
    const status = buildStatus(
      undefined,
      { ...ready, phase: "Failed", blocked: { reason: "UnsupportedVersion", message: "no 1.99" } },
      t1,
    );
    expect(status.conditions?.find((condition) => condition.type === "Ready")).toMatchObject({
      status: "False",
      reason: "UnsupportedVersion",
      message: "no 1.99",
    });
    expect(status.conditions?.find((condition) => condition.type === "ControlPlaneReady")?.status).toBe(
      "True",
    );
    expect(status.timings?.readyAt).toBeUndefined();
  });
});
