"use client";

/**
 * The virtualised list of held lines: only the rows in view (plus a margin) are in the DOM, so
 * 50 000 held lines render like 50. Without wrap every row is one fixed-height line; with wrap rows
 * are measured. Keys are the lines' sequence numbers, so dropping the oldest lines keeps the rows
 * in view where they are, and a view scrolled to the end follows new lines.
 */
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, type Ref, useEffect, useImperativeHandle, useRef } from "react";
import type { HeldLine, LogBuffer } from "@/components/streams/log-buffer";
import { sourceColour } from "@/components/streams/log-export";
import { highlightSegments, type MatchIndex } from "@/components/streams/log-search";
import styles from "@/components/streams/streams.module.css";

const rowHeight = 20;

export interface LogLinesHandle {
  scrollToEnd(): void;
  scrollToSeq(seq: number): void;
}

export interface LogLinesProps {
  buffer: LogBuffer;
  /** Changes when the buffer's lines changed. */
  version: number;
  /** Show only these lines (a filter); all held lines when undefined. */
  only?: MatchIndex;
  needle: string;
  timestamps: boolean;
  wrap: boolean;
  follow: boolean;
  currentSeq?: number;
  /** Names of the streams, shown before each line in a multi-pod view. */
  sourceNames?: readonly string[];
  label: string;
  emptyText: string;
  ref?: Ref<LogLinesHandle>;
}

export function LogLines(props: LogLinesProps) {
  const { buffer, only, wrap, follow, ref } = props;
  const viewport = useRef<HTMLDivElement>(null);
  const count = only ? only.count : buffer.size;
  const lineAt = (index: number): HeldLine | undefined =>
    only ? buffer.bySeq(only.at(index) ?? -1) : buffer.at(index);

  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => viewport.current,
    estimateSize: () => rowHeight,
    getItemKey: (index) => lineAt(index)?.seq ?? `missing-${index}`,
    overscan: 30,
    anchorTo: "end",
    followOnAppend: follow,
  });

  // Measured sizes from wrapped rows do not apply to unwrapped ones (and back).
  // biome-ignore lint/correctness/useExhaustiveDependencies: re-measure when wrap flips
  useEffect(() => virtualizer.measure(), [wrap, virtualizer]);

  useImperativeHandle(
    ref,
    () => ({
      scrollToEnd: () => {
        if (count > 0) virtualizer.scrollToIndex(count - 1, { align: "end" });
      },
      scrollToSeq: (seq) => {
        const index = only ? only.indexAtOrAfter(seq) : seq - buffer.firstSeq;
        if (index >= 0 && index < count) virtualizer.scrollToIndex(index, { align: "center" });
      },
    }),
    [virtualizer, count, only, buffer],
  );

  const items = virtualizer.getVirtualItems();
  return (
    <div
      ref={viewport}
      className={styles.viewport}
      role="log"
      aria-live="off"
      aria-label={props.label}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the scrolling list must be reachable by keyboard
      tabIndex={0}
      data-testid="log-lines"
      data-count={count}
    >
      {count === 0 ? <p className={styles.empty}>{props.emptyText}</p> : null}
      <div className={styles.rows} style={{ height: virtualizer.getTotalSize() }}>
        {items.map((item) => {
          const line = lineAt(item.index);
          if (!line) return null;
          return (
            <LogRow
              key={item.key as number}
              index={item.index}
              start={item.start}
              line={line}
              needle={props.needle}
              timestamps={props.timestamps}
              wrap={wrap}
              current={line.seq === props.currentSeq}
              sourceName={props.sourceNames?.[line.source]}
              measure={wrap ? virtualizer.measureElement : undefined}
            />
          );
        })}
      </div>
    </div>
  );
}

const LogRow = memo(function LogRow({
  index,
  start,
  line,
  needle,
  timestamps,
  wrap,
  current,
  sourceName,
  measure,
}: {
  index: number;
  start: number;
  line: HeldLine;
  needle: string;
  timestamps: boolean;
  wrap: boolean;
  current: boolean;
  sourceName: string | undefined;
  measure: ((element: HTMLDivElement | null) => void) | undefined;
}) {
  return (
    <div
      ref={measure}
      data-index={index}
      data-wrap={wrap}
      data-current={current || undefined}
      className={styles.row}
      style={{ transform: `translateY(${start}px)` }}
    >
      {timestamps && line.ts ? <span className={styles.ts}>{line.ts}</span> : null}
      {sourceName !== undefined ? (
        <span className={styles.source} style={{ color: sourceColour(line.source) }}>
          {sourceName}
        </span>
      ) : null}
      <span className={styles.text}>
        {highlightSegments(line.text, needle).map((segment, position) =>
          segment.match ? (
            // biome-ignore lint/suspicious/noArrayIndexKey: segments of one immutable line
            <mark key={position}>{segment.text}</mark>
          ) : (
            segment.text
          ),
        )}
      </span>
    </div>
  );
});
