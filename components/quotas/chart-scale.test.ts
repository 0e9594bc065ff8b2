import { describe, expect, it } from "vitest";
import { barTone, barWidth, formatAmount, linearScale, linePath, niceAxis, stepPath } from "./chart-scale";

describe("niceAxis", () => {
  it.each([
    [2, { top: 2, ticks: [0, 0.5, 1, 1.5, 2] }],
    [3.7, { top: 4, ticks: [0, 1, 2, 3, 4] }],
    [9, { top: 10, ticks: [0, 2.5, 5, 7.5, 10] }],
    [0.3, { top: 0.3, ticks: [0, 0.1, 0.2, 0.3] }],
    [1000, { top: 1000, ticks: [0, 250, 500, 750, 1000] }],
  ])("max %s → %j", (max, expected) => {
    expect(niceAxis(max)).toEqual(expected);
  });

  it("never collapses to zero height", () => {
    const { top, ticks } = niceAxis(0);
    expect(top).toBeGreaterThan(0);
    expect(ticks[0]).toBe(0);
  });

  it("always reaches the maximum", () => {
    for (const max of [0.001, 1, 1.1, 7, 33, 2 ** 31, 123_456])
      expect(niceAxis(max).top).toBeGreaterThanOrEqual(max);
  });
});

describe("linearScale", () => {
  it("maps the domain onto the range, inverted for SVG's y", () => {
    const y = linearScale(0, 4, 100, 0);
    expect(y(0)).toBe(100);
    expect(y(2)).toBe(50);
    expect(y(4)).toBe(0);
  });

  it("puts a single instant in the middle", () => {
    expect(linearScale(5, 5, 0, 200)(5)).toBe(100);
  });
});

describe("paths", () => {
  it("draws a line and breaks it at gaps", () => {
    expect(
      linePath([
        { x: 0, y: 10 },
        { x: 1, y: 20 },
        { x: 2, y: null },
        { x: 3, y: 5 },
      ]),
    ).toBe("M0,10L1,20M3,5");
  });

  it("draws a limit as steps", () => {
    expect(
      stepPath([
        { x: 0, y: 50 },
        { x: 10, y: 50 },
        { x: 20, y: 25 },
      ]),
    ).toBe("M0,50L10,50L10,50L20,50L20,25");
  });
});

describe("formatAmount", () => {
  it.each([
    [1.5, "cpu", "1.5"],
    [0.25, "cpu", "250m"],
    [2, "cpu", "2"],
    [1.5 * 2 ** 30, "memory", "1.5Gi"],
    [512 * 2 ** 20, "memory", "512Mi"],
    [100, "memory", "100"],
    [12, "count", "12"],
    [0, "memory", "0"],
  ] as const)("%s %s → %s", (value, kind, text) => {
    expect(formatAmount(value, kind)).toBe(text);
  });
});

describe("bars", () => {
  it("clamps the width and colours by how full", () => {
    expect(barWidth(null)).toBe(0);
    expect(barWidth(42.5)).toBe(42.5);
    expect(barWidth(150)).toBe(100);
    expect(barWidth(Number.POSITIVE_INFINITY)).toBe(100);
    expect(barTone(null)).toBe("none");
    expect(barTone(50)).toBe("ok");
    expect(barTone(90)).toBe("warning");
    expect(barTone(100)).toBe("warning");
    expect(barTone(100.01)).toBe("over");
  });
});
