import { describe, expect, it } from "vitest";
import type { ObjectEvent } from "@/server/k8s/events";
import { buildTimeline, formatDuration } from "./provisioning-timeline";

const t0 = Date.parse("2026-11-21T08:00:00Z");
const at = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();
const event = (reason: string, seconds: number, message = ""): ObjectEvent => ({
  type: reason === "Failed" ? "Warning" : "Normal",
  reason,
  message,
  count: 1,
  firstAt: at(seconds),
  lastAt: at(seconds),
});
const noTimings = {
  createdAt: null,
  provisioningStartedAt: null,
  controlPlaneReadyAt: null,
  readyAt: null,
  lastReadyAt: null,
};

describe("buildTimeline", () => {
  it("shows a new tenant as created, with provisioning under way next", () => {
    const steps = buildTimeline({
      phase: "Pending",
      createdAt: at(0),
      timings: noTimings,
      conditions: [],
      events: [],
    });
    expect(steps.map((step) => [step.label, step.state])).toEqual([
      ["Created", "done"],
      ["Provisioning started", "current"],
      ["Control plane serving", "pending"],
      ["Defaults applied", "pending"],
      ["Ready", "pending"],
    ]);
  });

  it("orders a ready tenant's steps with the time since the previous one", () => {
    const steps = buildTimeline({
      phase: "Ready",
      createdAt: at(0),
      timings: {
        createdAt: at(0),
        provisioningStartedAt: at(1),
        controlPlaneReadyAt: at(9),
        readyAt: at(12),
        lastReadyAt: at(12),
      },
      conditions: [
        {
          type: "DefaultsApplied",
          status: "True",
          reason: "Applied",
          message: null,
          lastTransitionTime: at(12),
        },
      ],
      // The phase Events of the first provisioning are the base steps, not new ones.
      events: [event("Provisioning", 1), event("Ready", 13)],
    });
    expect(steps.map((step) => [step.label, step.state, step.sincePreviousMs])).toEqual([
      ["Created", "done", null],
      ["Provisioning started", "done", 1000],
      ["Control plane serving", "done", 8000],
      ["Defaults applied", "done", 3000],
      ["Ready", "done", 0],
    ]);
  });

  it("adds suspension, resumption and failure from Events, and the current phase without one", () => {
    const timings = {
      createdAt: at(0),
      provisioningStartedAt: at(1),
      controlPlaneReadyAt: at(9),
      readyAt: at(12),
      lastReadyAt: at(70),
    };
    const steps = buildTimeline({
      phase: "Failed",
      createdAt: at(0),
      timings,
      conditions: [
        {
          type: "Ready",
          status: "False",
          reason: "UnsupportedVersion",
          message: "no 1.20",
          lastTransitionTime: at(90),
        },
      ],
      events: [
        event("Provisioning", 1),
        event("Ready", 12),
        event("Suspended", 40, "stopped"),
        event("Provisioning", 60),
        event("Ready", 70),
      ],
    });
    expect(steps.slice(5).map((step) => [step.label, step.state, step.detail, step.sincePreviousMs])).toEqual(
      [
        ["Suspended", "done", "stopped", 28_000],
        ["Resuming", "done", null, 20_000],
        ["Ready again", "done", null, 10_000],
        ["Failed", "failed", "no 1.20", 20_000],
      ],
    );
  });
});

it("keeps a quick suspend and resume apart from the first ready (Event times are whole seconds)", () => {
  const steps = buildTimeline({
    phase: "Ready",
    createdAt: at(0),
    timings: {
      createdAt: at(0),
      provisioningStartedAt: at(3),
      controlPlaneReadyAt: at(5),
      readyAt: at(7.005),
      lastReadyAt: at(11.2),
    },
    conditions: [
      // Moved again by the resume: the first time the defaults were in place is readyAt.
      {
        type: "DefaultsApplied",
        status: "True",
        reason: "Applied",
        message: null,
        lastTransitionTime: at(11.2),
      },
    ],
    events: [
      event("Provisioning", 3),
      event("Ready", 7),
      event("Suspended", 7),
      event("Provisioning", 10),
      event("Ready", 11),
    ],
  });
  expect(steps.map((step) => step.label)).toEqual([
    "Created",
    "Provisioning started",
    "Control plane serving",
    "Defaults applied",
    "Ready",
    "Suspended",
    "Resuming",
    "Ready again",
  ]);
  expect(steps.every((step) => step.state === "done")).toBe(true);
});

describe("formatDuration", () => {
  it("picks a readable unit", () => {
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(12_400)).toBe("12.4 s");
    expect(formatDuration(185_000)).toBe("3 min 5 s");
    expect(formatDuration(2 * 3_600_000 + 600_000)).toBe("2 h 10 min");
  });
});
