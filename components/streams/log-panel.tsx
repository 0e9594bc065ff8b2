"use client";

/**
 * What every log view shares: follow / pause, search with highlight or filter, wrap, timestamps,
 * download and copy, the stream's state, the note about dropped lines, and the virtualised list.
 * The views (one pod or node, several pods) add their own selects through `controls`.
 */
import { type ReactNode, useId, useMemo, useRef, useState } from "react";
import { logFileName, logText } from "@/components/streams/log-export";
import { LogLines, type LogLinesHandle } from "@/components/streams/log-lines";
import { MatchIndex, searchNeedle } from "@/components/streams/log-search";
import styles from "@/components/streams/streams.module.css";
import type { LogStreams } from "@/components/streams/use-log-streams";
import { useToast } from "@/components/ui/toast";

export const tailChoices = [
  { label: "Last 100 lines", value: 100 },
  { label: "Last 1,000 lines", value: 1_000 },
  { label: "Last 10,000 lines", value: 10_000 },
  { label: "Last 100,000 lines", value: 100_000 },
  { label: "All lines", value: undefined },
] as const;

export const sinceChoices = [
  { label: "Any time", value: undefined },
  { label: "Last 5 minutes", value: 300 },
  { label: "Last 15 minutes", value: 900 },
  { label: "Last hour", value: 3_600 },
  { label: "Last 6 hours", value: 21_600 },
  { label: "Last 24 hours", value: 86_400 },
] as const;

export const defaultTailLines = 1_000;

/** The tail and since selects (a change starts the view over). */
export function WindowControls({
  tailLines,
  sinceSeconds,
  onChange,
}: {
  tailLines: number | undefined;
  sinceSeconds: number | undefined;
  onChange(next: { tailLines: number | undefined; sinceSeconds: number | undefined }): void;
}) {
  return (
    <>
      <label className="field">
        Tail
        <select
          value={String(tailLines ?? "all")}
          onChange={(event) =>
            onChange({
              tailLines: event.target.value === "all" ? undefined : Number(event.target.value),
              sinceSeconds,
            })
          }
        >
          {tailChoices.map((choice) => (
            <option key={choice.label} value={String(choice.value ?? "all")}>
              {choice.label}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        Since
        <select
          value={String(sinceSeconds ?? "any")}
          onChange={(event) =>
            onChange({
              tailLines,
              sinceSeconds: event.target.value === "any" ? undefined : Number(event.target.value),
            })
          }
        >
          {sinceChoices.map((choice) => (
            <option key={choice.label} value={String(choice.value ?? "any")}>
              {choice.label}
            </option>
          ))}
        </select>
      </label>
    </>
  );
}

export function LogPanel({
  streams,
  paused,
  onPausedChange,
  subject,
  label,
  controls,
  status,
  sourceNames,
}: {
  streams: LogStreams;
  paused: boolean;
  onPausedChange(paused: boolean): void;
  /** Names the download, e.g. `default-web-app`. */
  subject: string;
  /** The accessible name of the line list. */
  label: string;
  controls?: ReactNode;
  status: ReactNode;
  sourceNames?: readonly string[];
}) {
  const { buffer, version } = streams;
  const toast = useToast();
  const lines = useRef<LogLinesHandle>(null);
  const searchId = useId();
  const [query, setQuery] = useState("");
  const [filter, setFilter] = useState(false);
  const [timestamps, setTimestamps] = useState(false);
  const [wrap, setWrap] = useState(false);
  const [currentSeq, setCurrentSeq] = useState<number | undefined>(undefined);
  const needle = searchNeedle(query);

  const [matches] = useState(() => new MatchIndex());
  const matchNeedle = useRef<string | null>(null);
  // The index is a cache of the buffer: bring it up to date for this render (idempotent).
  // biome-ignore lint/correctness/useExhaustiveDependencies: version stands for the buffer's content
  const matchCount = useMemo(() => {
    if (matchNeedle.current !== needle) {
      matchNeedle.current = needle;
      matches.setNeedle(needle);
    }
    matches.sync(buffer);
    return matches.count;
  }, [needle, version, buffer, matches]);

  const shownLines = function* () {
    if (!filter || needle === "") yield* buffer;
    else for (let index = 0; index < matches.count; index++) yield buffer.bySeq(matches.at(index) ?? -1)!;
  };

  const jump = (direction: 1 | -1) => {
    if (matches.count === 0) return;
    const from =
      currentSeq === undefined
        ? direction === 1
          ? 0
          : matches.count - 1
        : direction === 1
          ? matches.indexAtOrAfter(currentSeq + 1)
          : matches.indexAtOrAfter(currentSeq) - 1;
    const position = (from + matches.count) % matches.count;
    const seq = matches.at(position);
    if (seq === undefined) return;
    setCurrentSeq(seq);
    lines.current?.scrollToSeq(seq);
  };

  const download = () => {
    const blob = new Blob([logText(shownLines(), { timestamps, sourceNames })], { type: "text/plain" });
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = logFileName(subject, new Date());
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };

  const copy = async () => {
    const text = logText(shownLines(), { timestamps, sourceNames });
    try {
      await navigator.clipboard.writeText(text);
      toast(`Copied ${text === "" ? 0 : text.split("\n").length - 1} lines.`);
    } catch {
      toast("The browser did not allow copying to the clipboard.", "error");
    }
  };

  const filtering = filter && needle !== "";
  return (
    <div className={styles.panel}>
      <div className={styles.toolbar}>
        <button
          type="button"
          className={paused ? "button button-primary" : "button"}
          onClick={() => {
            onPausedChange(!paused);
            if (paused) lines.current?.scrollToEnd();
          }}
        >
          {paused ? "Follow" : "Pause"}
        </button>
        {controls}
        <label className="field" htmlFor={searchId}>
          Search logs
          <input
            id={searchId}
            type="search"
            value={query}
            placeholder="Text to find"
            onChange={(event) => {
              setQuery(event.target.value);
              setCurrentSeq(undefined);
            }}
            onKeyDown={(event) => {
              if (event.key === "Enter") {
                event.preventDefault();
                jump(event.shiftKey ? -1 : 1);
              }
            }}
          />
        </label>
        <label className={styles.check}>
          <input type="checkbox" checked={filter} onChange={(event) => setFilter(event.target.checked)} />
          Only matching lines
        </label>
        {needle !== "" && !filtering ? (
          <>
            <button type="button" className="button" aria-label="Previous match" onClick={() => jump(-1)}>
              ↑
            </button>
            <button type="button" className="button" aria-label="Next match" onClick={() => jump(1)}>
              ↓
            </button>
          </>
        ) : null}
        <label className={styles.check}>
          <input
            type="checkbox"
            checked={timestamps}
            onChange={(event) => setTimestamps(event.target.checked)}
          />
          Timestamps
        </label>
        <label className={styles.check}>
          <input type="checkbox" checked={wrap} onChange={(event) => setWrap(event.target.checked)} />
          Wrap
        </label>
        <span className={styles.spacer} />
        <button type="button" className="button" onClick={download}>
          Download
        </button>
        <button type="button" className="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <div className={styles.statusbar}>
        {status}
        <span data-testid="log-line-count">
          {buffer.size.toLocaleString("en")} lines held
          {needle !== "" ? ` · ${matchCount.toLocaleString("en")} matching` : ""}
        </span>
      </div>
      {buffer.dropped > 0 ? (
        <p className={styles.dropped} role="note">
          {buffer.dropped.toLocaleString("en")} older lines dropped (this view keeps the last{" "}
          {buffer.limits.maxLines.toLocaleString("en")}).
        </p>
      ) : null}
      <LogLines
        ref={lines}
        buffer={buffer}
        version={version}
        only={filtering ? matches : undefined}
        needle={needle}
        timestamps={timestamps}
        wrap={wrap}
        follow={!paused}
        currentSeq={currentSeq}
        sourceNames={sourceNames}
        label={label}
        emptyText={filtering ? "No line matches the search." : "No log lines yet."}
      />
    </div>
  );
}
