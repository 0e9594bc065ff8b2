/**
 * A resource's quota history from QuotaSample rows, bounded for the browser: samples are grouped
 * into equal time buckets and each bucket keeps its peak (a quota is about peaks: averaging would
 * hide the moment a tenant hit its limit) with the limit in force at its end.
 */
import { parseQuantity, QuantityError, quantityToNumber } from "@/server/core/quantity";
import type { QuotaResource } from "@/server/core/quota-resources";

/** The most points a history answer carries. */
export const MAX_HISTORY_POINTS = 500;

export interface HistoryPoint {
  at: Date;
  /** Units (cores, bytes, objects). */
  used: number;
  /** The limit at that time; null when none was set. */
  limit: number | null;
}

/**
 * At most `maxPoints` points from time-ordered `points`: unchanged when there are few enough,
 * otherwise one per non-empty bucket of equal duration between the first and last sample, at the
 * time of the bucket's highest usage, with the bucket's last limit.
 */
export function downsample(points: readonly HistoryPoint[], maxPoints = MAX_HISTORY_POINTS): HistoryPoint[] {
  if (maxPoints < 1) throw new RangeError("maxPoints must be at least 1");
  if (points.length <= maxPoints) return [...points];
  const first = points[0]!.at.getTime();
  const span = points.at(-1)!.at.getTime() - first;
  const buckets: HistoryPoint[][] = [];
  for (const point of points) {
    const offset = point.at.getTime() - first;
    const index = span === 0 ? 0 : Math.min(maxPoints - 1, Math.floor((offset / span) * maxPoints));
    const bucket = buckets[index] ?? [];
    bucket.push(point);
    buckets[index] = bucket;
  }
  return buckets
    .filter((bucket) => bucket !== undefined && bucket.length > 0)
    .map((bucket) => {
      const peak = bucket.reduce((best, point) => (point.used > best.used ? point : best));
      return { at: peak.at, used: peak.used, limit: bucket.at(-1)!.limit };
    });
}

/** A sampled amount as units; absent or unreadable (written by hand?) reads as none. */
function amountOf(map: unknown, resource: QuotaResource): number | null {
  if (!map || typeof map !== "object") return null;
  const text = (map as Record<string, unknown>)[resource];
  if (typeof text !== "string") return null;
  try {
    return quantityToNumber(parseQuantity(text));
  } catch (error) {
    if (error instanceof QuantityError) return null;
    throw error;
  }
}

/** QuotaSample rows (used and hard as resource → quantity) as one resource's points. */
export function samplePoints(
  rows: readonly { at: Date; used: unknown; hard: unknown }[],
  resource: QuotaResource,
): HistoryPoint[] {
  return rows.map((row) => ({
    at: row.at,
    used: amountOf(row.used, resource) ?? 0,
    limit: amountOf(row.hard, resource),
  }));
}
