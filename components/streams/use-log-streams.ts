"use client";

/**
 * The state behind a log view: one or several kept-alive streams, merged by timestamp into one
 * bounded buffer. Frames go into the buffer as they arrive (bounded whatever the tab does); the
 * view re-renders at most once per animation frame.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { LogBuffer } from "@/components/streams/log-buffer";
import { type ConnectionStatus, LogConnection, type LogTarget } from "@/components/streams/log-connection";
import { LogMerger } from "@/components/streams/log-merge";
import { streamUrl } from "@/components/streams/stream-paths";

export interface LogWindow {
  /** Lines from the end to start with; undefined for all. */
  tailLines?: number;
  /** Only lines newer than this many seconds; undefined for all. */
  sinceSeconds?: number;
}

export interface LogStreams {
  buffer: LogBuffer;
  /** Changes whenever the buffer's lines changed and were rendered. */
  version: number;
  statuses: ConnectionStatus[];
  reconnect(): void;
}

const connecting: ConnectionStatus = { phase: "connecting", tone: "info" };

export function useLogStreams(
  targets: readonly LogTarget[],
  range: LogWindow,
  options: { paused: boolean; maxLines: number },
): LogStreams {
  const [buffer] = useState(() => new LogBuffer({ maxLines: options.maxLines }));
  const [version, setVersion] = useState(0);
  const [statuses, setStatuses] = useState<ConnectionStatus[]>(() => targets.map(() => connecting));
  const connections = useRef<LogConnection[]>([]);
  const paused = useRef(options.paused);
  paused.current = options.paused;

  // One key for what is streamed: a change starts over with an empty view.
  const key = JSON.stringify({ targets, range });

  useEffect(() => {
    const { targets: streams, range: since } = JSON.parse(key) as { targets: LogTarget[]; range: LogWindow };
    buffer.clear();
    setVersion(buffer.version);
    setStatuses(streams.map(() => connecting));
    const merger = new LogMerger(streams.length, Date.now());
    let frame: number | undefined;
    let releaseTimer: ReturnType<typeof setTimeout> | undefined;

    const flush = () => {
      frame = undefined;
      const released = merger.drain(Date.now());
      if (released.length > 0) buffer.push(released);
      setVersion(buffer.version);
      clearTimeout(releaseTimer);
      const next = merger.nextRelease();
      if (next !== undefined) releaseTimer = setTimeout(schedule, Math.max(0, next - Date.now()));
    };
    function schedule() {
      // A hidden tab runs no animation frames: keep memory bounded by flushing into the buffer now.
      if (merger.pending > 10_000) return flush();
      frame ??= requestAnimationFrame(flush);
    }

    const sinceTime =
      since.sinceSeconds === undefined
        ? undefined
        : new Date(Date.now() - since.sinceSeconds * 1000).toISOString();
    const opened = streams.map(
      (target, source) =>
        new LogConnection({
          target,
          tailLines: since.tailLines,
          sinceTime,
          paused: paused.current,
          openSocket: (path) => new WebSocket(streamUrl(path, window.location)),
          onLines: (lines) => {
            merger.add(source, lines, Date.now());
            schedule();
          },
          onStatus: (status) => {
            if (status.phase !== "open" && status.phase !== "connecting") {
              merger.end(source);
              schedule();
            }
            setStatuses((all) => all.map((each, index) => (index === source ? status : each)));
          },
        }),
    );
    connections.current = opened;
    for (const connection of opened) connection.start();
    return () => {
      for (const connection of opened) connection.dispose();
      if (frame !== undefined) cancelAnimationFrame(frame);
      clearTimeout(releaseTimer);
    };
  }, [key, buffer]);

  useEffect(() => {
    for (const connection of connections.current) connection.setPaused(options.paused);
  }, [options.paused]);

  const reconnect = useCallback(() => {
    for (const connection of connections.current)
      if (connection.phase === "closed" || connection.phase === "retrying") connection.reconnect();
  }, []);

  return { buffer, version, statuses, reconnect };
}
