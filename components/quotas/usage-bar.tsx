import { barTone, barWidth } from "@/components/quotas/chart-scale";
import styles from "@/components/quotas/quotas.module.css";

/** How full a limit is: a bar that turns amber at 90% and red over 100%. */
export function UsageBar({ percent, label }: { percent: number | null; label: string }) {
  const tone = barTone(percent);
  const text = percent === null ? "no limit" : Number.isFinite(percent) ? `${percent}%` : "over a limit of 0";
  return (
    <div className={styles.bar} title={text}>
      <span className="sr-only">
        {label}: {text}
      </span>
      <div className={styles.fill} data-tone={tone} style={{ width: `${barWidth(percent)}%` }} aria-hidden />
    </div>
  );
}

/** "75%", "over (150%)" or "—" next to a bar. */
export function PercentText({ percent }: { percent: number | null }) {
  if (percent === null) return <span className={styles.muted}>—</span>;
  if (percent > 100)
    return <span className={styles.over}>{Number.isFinite(percent) ? `${percent}% (over)` : "over"}</span>;
  return <span className={styles.numbers}>{percent}%</span>;
}
