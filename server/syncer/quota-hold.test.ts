import { describe, expect, it } from "vitest";
import { parseQuantity } from "@/server/core/quantity";
import { createQuotaHoldState, decideHold } from "./quota-hold";

const now = new Date("2026-11-21T12:00:00Z");
const pod = (cpu: string, phase = "Pending") => ({
  spec: { containers: [{ name: "main", resources: { requests: { cpu }, limits: { cpu } } }] },
  status: { phase },
});
const hard = { "requests.cpu": parseQuantity("1") };

describe("decideHold", () => {
  it("counts pods below and pods being admitted, and holds the one that does not fit", () => {
    const state = createQuotaHoldState();
    const pods = [
      { key: "a/running", pod: pod("600m", "Running"), below: true },
      { key: "a/next", pod: pod("300m"), below: false },
      { key: "a/big", pod: pod("300m"), below: false },
    ];
    expect(decideHold(state, { tenant: "acme", hard, key: "a/next", pod: pods[1]!.pod, pods, now })).toEqual({
      hold: false,
    });
    // a/next is admitting (not below yet): 900m of 1 is taken.
    const decision = decideHold(state, { tenant: "acme", hard, key: "a/big", pod: pods[2]!.pod, pods, now });
    expect(decision.hold).toBe(true);
    expect(decision.hold && decision.message).toContain("requests.cpu: requested 300m, used 900m, limited 1");
    expect(state.held.has("a/big")).toBe(true);
  });

  it("lets a held pod go once another finished, and forgets admitting pods deleted before they went down", () => {
    const state = createQuotaHoldState();
    state.admitting.set("a/deleted", { "requests.cpu": parseQuantity("900m") });
    state.held.add("a/big");
    const pods = [
      { key: "a/done", pod: pod("900m", "Succeeded"), below: true },
      { key: "a/big", pod: pod("1"), below: false },
    ];
    expect(decideHold(state, { tenant: "acme", hard, key: "a/big", pod: pods[1]!.pod, pods, now }).hold).toBe(
      false,
    );
    expect(state.held.size).toBe(0);
    expect([...state.admitting.keys()]).toEqual(["a/big"]);
  });

  it("drops a pod from admitting once it is seen below", () => {
    const state = createQuotaHoldState();
    state.admitting.set("a/one", { "requests.cpu": parseQuantity("500m") });
    const pods = [
      { key: "a/one", pod: pod("500m", "Running"), below: true },
      { key: "a/two", pod: pod("500m"), below: false },
    ];
    expect(decideHold(state, { tenant: "acme", hard, key: "a/two", pod: pods[1]!.pod, pods, now }).hold).toBe(
      false,
    );
    expect([...state.admitting.keys()]).toEqual(["a/two"]);
  });
});
