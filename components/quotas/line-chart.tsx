import {
  type AmountKind,
  formatAmount,
  linearScale,
  linePath,
  niceAxis,
  stepPath,
} from "@/components/quotas/chart-scale";
import styles from "@/components/quotas/quotas.module.css";

export interface ChartPoint {
  at: Date;
  used: number;
  limit: number | null;
}

const WIDTH = 640;
const HEIGHT = 220;
const PAD = { top: 12, right: 12, bottom: 24, left: 56 };

const timeFormat = new Intl.DateTimeFormat("en-GB", {
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  timeZone: "UTC",
});

/** Usage (solid) and its limit (dashed steps) over time; plain SVG, no chart library. */
export function LineChart({
  points,
  from,
  to,
  kind,
  label,
}: {
  points: readonly ChartPoint[];
  from: Date;
  to: Date;
  kind: AmountKind;
  label: string;
}) {
  const max = Math.max(0, ...points.map((point) => Math.max(point.used, point.limit ?? 0)));
  const axis = niceAxis(max);
  const x = linearScale(from.getTime(), to.getTime(), PAD.left, WIDTH - PAD.right);
  const y = linearScale(0, axis.top, HEIGHT - PAD.bottom, PAD.top);
  const used = linePath(points.map((point) => ({ x: x(point.at.getTime()), y: y(point.used) })));
  const limitPoints = points.map((point) => ({
    x: x(point.at.getTime()),
    y: point.limit === null ? null : y(point.limit),
  }));
  const last = points.at(-1);
  // The limit holds until now: extend its last step to the right edge.
  if (last && last.limit !== null) limitPoints.push({ x: x(to.getTime()), y: y(last.limit) });
  const limit = stepPath(limitPoints);
  const timeTicks = [from, new Date((from.getTime() + to.getTime()) / 2), to];
  // The limits in force over the period, oldest first, one entry per change (for tests and tooling).
  const limitSteps = points
    .map((point) => (point.limit === null ? "none" : formatAmount(point.limit, kind)))
    .filter((step, index, steps) => index === 0 || step !== steps[index - 1]);

  return (
    <figure style={{ margin: 0 }}>
      <svg
        className={styles.chart}
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={label}
        data-limit-steps={limitSteps.join(" ")}
        data-limit={last?.limit == null ? "none" : formatAmount(last.limit, kind)}
      >
        <title>{label}</title>
        {axis.ticks.map((tick) => (
          <g key={tick}>
            <line
              className={styles.gridLine}
              x1={PAD.left}
              x2={WIDTH - PAD.right}
              y1={y(tick)}
              y2={y(tick)}
            />
            <text x={PAD.left - 6} y={y(tick) + 4} textAnchor="end">
              {formatAmount(tick, kind)}
            </text>
          </g>
        ))}
        {timeTicks.map((tick, index) => (
          <text
            key={tick.getTime()}
            x={x(tick.getTime())}
            y={HEIGHT - 6}
            textAnchor={index === 0 ? "start" : index === timeTicks.length - 1 ? "end" : "middle"}
          >
            {timeFormat.format(tick)}
          </text>
        ))}
        {limit ? <path className={styles.limitLine} d={limit} data-series="limit" /> : null}
        {used ? <path className={styles.usedLine} d={used} data-series="used" /> : null}
        {points.length === 1 && last ? (
          <circle cx={x(last.at.getTime())} cy={y(last.used)} r={3} fill="var(--accent)" />
        ) : null}
      </svg>
      <figcaption className={styles.legend}>
        <span>
          <span className={styles.swatchUsed} />
          Used
        </span>
        <span>
          <span className={styles.swatchLimit} />
          Limit
        </span>
      </figcaption>
    </figure>
  );
}
