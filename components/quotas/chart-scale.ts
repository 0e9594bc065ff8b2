/**
 * The arithmetic of the quota charts and bars, kept apart from React so it is unit-tested: a
 * "nice" axis (ticks at 1, 2, 2.5 or 5 × 10^n), value → pixel scaling, the SVG path of a series,
 * and axis labels in the units people read (cores, Mi/Gi, objects).
 */

export type AmountKind = "cpu" | "memory" | "count";

/** An upper bound ≥ max with round ticks; at least 1 so an idle series still has an axis. */
export function niceAxis(max: number, tickCount = 4): { top: number; ticks: number[] } {
  const target = Math.max(max, Number.EPSILON);
  const raw = target / tickCount;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((factor) => factor * magnitude).find((candidate) => candidate >= raw)!;
  const top = Math.max(step * Math.ceil(target / step - 1e-9), step);
  const ticks: number[] = [];
  for (let value = 0; value <= top + step / 2; value += step) ticks.push(Number(value.toPrecision(12)));
  return { top: Number(top.toPrecision(12)), ticks };
}

/** Maps [domainMin, domainMax] onto [rangeMin, rangeMax] (a zero-width domain maps to the middle). */
export function linearScale(
  domainMin: number,
  domainMax: number,
  rangeMin: number,
  rangeMax: number,
): (value: number) => number {
  const width = domainMax - domainMin;
  if (width === 0) return () => (rangeMin + rangeMax) / 2;
  return (value) => rangeMin + ((value - domainMin) / width) * (rangeMax - rangeMin);
}

/** An SVG path through the points; a null value breaks the line (no limit at that time). */
export function linePath(points: readonly { x: number; y: number | null }[]): string {
  let path = "";
  let drawing = false;
  for (const { x, y } of points) {
    if (y === null) {
      drawing = false;
      continue;
    }
    path += `${drawing ? "L" : "M"}${round(x)},${round(y)}`;
    drawing = true;
  }
  return path;
}

/** A step path (a limit holds until it changes). */
export function stepPath(points: readonly { x: number; y: number | null }[]): string {
  let path = "";
  let previous: { x: number; y: number } | null = null;
  for (const { x, y } of points) {
    if (y === null) {
      previous = null;
      continue;
    }
    path += previous
      ? `L${round(x)},${round(previous.y)}L${round(x)},${round(y)}`
      : `M${round(x)},${round(y)}`;
    previous = { x, y };
  }
  return path;
}

const round = (value: number) => Math.round(value * 10) / 10;

const BINARY = [
  ["Ti", 2 ** 40],
  ["Gi", 2 ** 30],
  ["Mi", 2 ** 20],
  ["Ki", 2 ** 10],
] as const;

/** An axis or tooltip label: "1.5" cores / "250m", "1.5Gi", "12". Approximate by design (charts). */
export function formatAmount(value: number, kind: AmountKind): string {
  if (value === 0) return "0";
  if (kind === "cpu") return value < 1 ? `${Math.round(value * 1000)}m` : `${trim(value)}`;
  if (kind === "memory") {
    for (const [suffix, size] of BINARY) if (value >= size) return `${trim(value / size)}${suffix}`;
    return `${Math.round(value)}`;
  }
  return `${trim(value)}`;
}

const trim = (value: number) => Number(value.toFixed(2)).toString();

/** The bar's filled width in percent: clamped to 0–100 (over is shown by colour, not overflow). */
export function barWidth(percent: number | null): number {
  if (percent === null || Number.isNaN(percent)) return 0;
  return Math.max(0, Math.min(100, percent));
}

/** How a usage bar is coloured. */
export function barTone(percent: number | null): "ok" | "warning" | "over" | "none" {
  if (percent === null) return "none";
  if (percent > 100) return "over";
  return percent >= 90 ? "warning" : "ok";
}
