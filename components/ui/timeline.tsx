import type { ReactNode } from "react";
import styles from "./timeline.module.css";

export type TimelineItemState = "done" | "current" | "pending" | "failed";

export interface TimelineItem {
  key: string;
  title: string;
  state: TimelineItemState;
  /** Times, durations: shown small beside the title. */
  meta?: ReactNode;
  detail?: ReactNode;
}

const stateWords: Record<TimelineItemState, string> = {
  done: "done",
  current: "in progress",
  pending: "not yet",
  failed: "failed",
};

/** An ordered list of steps with a marker per state; the state is also spoken, not only coloured. */
export function Timeline({ label, items }: { label: string; items: TimelineItem[] }) {
  return (
    <ol className={styles.timeline} aria-label={label}>
      {items.map((item) => (
        <li
          key={item.key}
          className={styles.step}
          data-state={item.state}
          aria-current={item.state === "current" ? "step" : undefined}
        >
          <span className={styles.marker} aria-hidden="true" />
          <div>
            <div className={styles.title}>
              {item.title} <span className="sr-only">({stateWords[item.state]})</span>
            </div>
            {item.meta ? <div className={styles.meta}>{item.meta}</div> : null}
            {item.detail ? <p className={styles.detail}>{item.detail}</p> : null}
          </div>
        </li>
      ))}
    </ol>
  );
}
