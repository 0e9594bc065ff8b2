import { afterEach, describe, expect, it, vi } from "vitest";
import { overallStatus } from "@/server/health/readiness";
import { partsStarting, setStartPart, startPart, stillStartingMessage } from "./start-state";

afterEach(() => {
  vi.useRealTimers();
  setStartPart("super-cluster", "ready");
  setStartPart("tenants", "ready");
});

describe("start state", () => {
  it("names the parts still starting, in start order, and how long they have taken", () => {
    vi.useFakeTimers({ now: new Date("2026-11-28T10:00:00Z") });
    setStartPart("tenants", "starting");
    setStartPart("super-cluster", "starting");
    expect(partsStarting()).toEqual(["super-cluster", "tenants"]);
    vi.setSystemTime(new Date("2026-11-28T10:00:04Z"));
    expect(stillStartingMessage("super-cluster")).toBe(
      "Ring0 is still starting its super cluster (4 s so far); try again in a moment.",
    );
    setStartPart("super-cluster", "ready");
    expect(stillStartingMessage("super-cluster")).toBeUndefined();
    expect(partsStarting()).toEqual(["tenants"]);
    setStartPart("tenants", "failed", "no webhooks' Service");
    expect(partsStarting()).toEqual([]);
    expect(startPart("tenants")).toMatchObject({ state: "failed", detail: "no webhooks' Service" });
  });

  it("reads readiness as starting only while nothing but starting parts is down", () => {
    const up = (name: string) => ({ name, ok: true, latencyMs: 1 });
    const down = (name: string) => ({ name, ok: false, latencyMs: 1 });
    expect(overallStatus([up("database"), up("super-cluster")], [])).toBe("ready");
    expect(
      overallStatus([up("database"), down("super-cluster"), down("tenants")], ["super-cluster", "tenants"]),
    ).toBe("starting");
    expect(overallStatus([down("database"), down("super-cluster")], ["super-cluster"])).toBe("not-ready");
    expect(overallStatus([down("super-cluster")], [])).toBe("not-ready");
  });
});
