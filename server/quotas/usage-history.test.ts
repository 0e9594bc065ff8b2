import { describe, expect, it } from "vitest";
import { downsample, type HistoryPoint, MAX_HISTORY_POINTS, samplePoints } from "./usage-history";

const start = Date.UTC(2026, 0, 1);
const minute = 60_000;
const at = (minutes: number) => new Date(start + minutes * minute);

function series(count: number, used: (index: number) => number, limit: (index: number) => number | null) {
  return Array.from({ length: count }, (_, index) => ({
    at: at(index),
    used: used(index),
    limit: limit(index),
  }));
}

describe("downsample", () => {
  it("leaves a short series alone", () => {
    const points = series(
      10,
      (index) => index,
      () => 2,
    );
    expect(downsample(points, 10)).toEqual(points);
  });

  it("never returns more than the maximum, and keeps the time order", () => {
    const points = series(
      10_000,
      (index) => index % 7,
      () => 2,
    );
    const result = downsample(points);
    expect(result.length).toBeLessThanOrEqual(MAX_HISTORY_POINTS);
    expect(result.length).toBeGreaterThan(MAX_HISTORY_POINTS - 5);
    for (let index = 1; index < result.length; index++) {
      expect(result[index]!.at.getTime()).toBeGreaterThan(result[index - 1]!.at.getTime());
    }
  });

  it("keeps a bucket's peak, not an average", () => {
    const points = series(
      1000,
      (index) => (index === 503 ? 9 : 1),
      () => 10,
    );
    const result = downsample(points, 10);
    expect(result).toHaveLength(10);
    expect(Math.max(...result.map((point) => point.used))).toBe(9);
    expect(result.find((point) => point.used === 9)!.at).toEqual(at(503));
  });

  it("shows the limit in force at the end of each bucket, so a raised quota appears", () => {
    const points = series(
      1000,
      () => 1,
      (index) => (index < 600 ? 2 : 4),
    );
    const result = downsample(points, 10);
    expect(result.slice(0, 6).every((point) => point.limit === 2)).toBe(true);
    expect(result.slice(6).every((point) => point.limit === 4)).toBe(true);
  });

  it("skips empty buckets (a sampler outage stays a gap, not invented points)", () => {
    const early = series(
      100,
      () => 1,
      () => null,
    );
    const late = series(
      100,
      () => 2,
      () => null,
    ).map((point) => ({ ...point, at: at(10_000 + point.at.getTime() / minute) }));
    const result = downsample(
      [...early, ...late].map((point) => ({ ...point, at: new Date(point.at) })),
      50,
    );
    expect(result.length).toBeLessThan(50);
    expect(result[0]!.used).toBe(1);
    expect(result.at(-1)!.used).toBe(2);
  });

  it("copes with every sample at the same instant", () => {
    const points: HistoryPoint[] = Array.from({ length: 20 }, (_, index) => ({
      at: at(0),
      used: index,
      limit: 5,
    }));
    expect(downsample(points, 3)).toEqual([{ at: at(0), used: 19, limit: 5 }]);
  });

  it("refuses a maximum below one", () => {
    expect(() => downsample([], 0)).toThrow(RangeError);
  });
});

describe("samplePoints", () => {
  it("reads quantities as units and a missing limit as none", () => {
    const rows = [
      { at: at(0), used: { "requests.cpu": "1500m" }, hard: { "requests.cpu": "2" } },
      { at: at(1), used: {}, hard: {} },
      { at: at(2), used: { "requests.cpu": "not-a-quantity" }, hard: null },
    ];
    expect(samplePoints(rows, "requests.cpu")).toEqual([
      { at: at(0), used: 1.5, limit: 2 },
      { at: at(1), used: 0, limit: null },
      { at: at(2), used: 0, limit: null },
    ]);
    expect(
      samplePoints([{ at: at(0), used: { "requests.memory": "1Gi" }, hard: {} }], "requests.memory")[0]!.used,
    ).toBe(2 ** 30);
  });
});
