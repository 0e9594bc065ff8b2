import { describe, expect, it } from "vitest";
import { parseQuantity } from "@/server/core/quantity";
import { countOf, formatUsage, percentOfLimit, resourceRows } from "./usage-view";

const q = (text: string) => parseQuantity(text);

describe("percentOfLimit", () => {
  it("is null without a limit", () => {
    expect(percentOfLimit(q("1"), undefined)).toBeNull();
  });

  it("is exact and rounds down, so almost full never reads as full", () => {
    expect(percentOfLimit(q("500m"), q("2"))).toBe(25);
    expect(percentOfLimit(q("1"), q("3"))).toBe(33.33);
    expect(percentOfLimit(q("1999999999n"), q("2"))).toBe(99.99);
    expect(percentOfLimit(q("2"), q("2"))).toBe(100);
    expect(percentOfLimit(q("3"), q("2"))).toBe(150);
    expect(percentOfLimit(q("1Gi"), q("4Gi"))).toBe(25);
  });

  it("treats a zero limit as full", () => {
    expect(percentOfLimit(0n, 0n)).toBe(100);
    expect(percentOfLimit(q("1"), 0n)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("resourceRows", () => {
  it("shows limited and used resources in display order, formatted like kubectl", () => {
    const rows = resourceRows(
      { "requests.cpu": q("2"), pods: q("10") },
      { "requests.cpu": q("1.5"), "requests.memory": q("1536Mi"), pods: q("3"), secrets: 0n },
    );
    expect(rows.map((row) => row.resource)).toEqual(["requests.cpu", "requests.memory", "pods"]);
    expect(rows[0]).toEqual({
      resource: "requests.cpu",
      label: "CPU requests",
      kind: "cpu",
      limit: "2",
      used: "1500m",
      limitValue: 2,
      usedValue: 1.5,
      percent: 75,
      over: false,
    });
    expect(rows[1]).toMatchObject({ limit: null, used: "1536Mi", percent: null, over: false });
    expect(rows[2]).toMatchObject({ limit: "10", used: "3", percent: 30 });
  });

  it("flags a resource over its limit (after a lowered quota)", () => {
    expect(resourceRows({ "limits.cpu": q("1") }, { "limits.cpu": q("1200m") })[0]).toMatchObject({
      over: true,
      percent: 120,
    });
  });

  it("lists a limited resource nobody uses yet as 0", () => {
    expect(resourceRows({ services: q("5") }, {})[0]).toMatchObject({ used: "0", usedValue: 0, percent: 0 });
  });
});

describe("formatUsage and countOf", () => {
  it("formats per resource kind", () => {
    expect(formatUsage({ "requests.cpu": q("250m"), "limits.memory": q("2048Mi"), pods: q("4") })).toEqual({
      "requests.cpu": "250m",
      "limits.memory": "2Gi",
      pods: "4",
    });
    expect(countOf(q("7"))).toBe(7);
    expect(countOf(undefined)).toBe(0);
  });
});
