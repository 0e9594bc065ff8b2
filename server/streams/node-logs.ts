/**
 * Node logs for operators: what the vn-agent serving a node logged (kept in a ring per node in this
 * process), and what kwok — the local super cluster's kubelet for every node — logged about the
 * node (its controller's JSON log file, filtered to lines naming the node). Both stream as
 * "<RFC 3339> <text>\n" lines, with tail, since and follow like a pod log.
 */
import fs from "node:fs";
import { Readable } from "node:stream";
import type { LogFields, Logger } from "@/server/logger";
import { normalTimestamp } from "./protocol";
import type { NodeLogProvider } from "./sources";

export interface LogRing {
  append(line: string): void;
  /** Lines held, oldest first. */
  lines(): string[];
  subscribe(listener: (line: string) => void): () => void;
}

/** The last `capacity` lines, and listeners for new ones. */
export function createLogRing(capacity = 5_000): LogRing {
  const held: string[] = [];
  let start = 0;
  const listeners = new Set<(line: string) => void>();
  return {
    append(line) {
      if (held.length < capacity) held.push(line);
      else {
        held[start] = line;
        start = (start + 1) % capacity;
      }
      for (const listener of listeners) listener(line);
    },
    lines: () => [...held.slice(start), ...held.slice(0, start)],
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

function renderFields(fields: LogFields | undefined): string {
  if (!fields) return "";
  const parts: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const text =
      value instanceof Error ? value.message : typeof value === "string" ? value : JSON.stringify(value);
    parts.push(`${key}=${/[\s"]/.test(text ?? "") ? JSON.stringify(text) : text}`);
  }
  return parts.length ? ` ${parts.join(" ")}` : "";
}

/** A logger that logs as `base` does and also keeps each line (every level) in `ring`. */
export function teeLogger(base: Logger, ring: LogRing, context: LogFields = {}): Logger {
  const write =
    (level: "debug" | "info" | "warn" | "error") =>
    (message: string, fields?: LogFields): void => {
      base[level](message, fields);
      ring.append(
        `${new Date().toISOString()} ${level.toUpperCase()} ${message}${renderFields({ ...context, ...fields })}`,
      );
    };
  return {
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    child: (fields) => teeLogger(base.child(fields), ring, { ...context, ...fields }),
  };
}

interface TailOptions {
  tailLines?: number;
  sinceTime?: string;
  follow: boolean;
}

/** Applies since and tail to timestamped lines (pure). */
export function selectLines(lines: string[], options: Omit<TailOptions, "follow">): string[] {
  const since = options.sinceTime ? normalTimestamp(new Date(options.sinceTime).toISOString()) : undefined;
  const recent = since
    ? lines.filter((line) => normalTimestamp(line.split(" ", 1)[0] ?? "") >= since)
    : lines;
  return options.tailLines === undefined
    ? recent
    : recent.slice(Math.max(0, recent.length - options.tailLines));
}

function readableOf(
  signal: AbortSignal,
  start: (push: (line: string) => void) => () => void,
  initial: string[],
  follow: boolean,
) {
  const stream = new Readable({ read() {} });
  for (const line of initial) stream.push(`${line}\n`);
  if (!follow) {
    stream.push(null);
    return stream;
  }
  const stop = start((line) => stream.push(`${line}\n`));
  const end = () => {
    stop();
    stream.push(null);
  };
  if (signal.aborted) end();
  else signal.addEventListener("abort", end, { once: true });
  stream.once("close", stop);
  return stream;
}

const ringsKey = Symbol.for("ring0.vnAgentLogRings");
type Holder = { [ringsKey]?: Map<string, LogRing> };

/** The ring of the vn-agent serving `node` in this process (created on first use). */
export function vnAgentLogRing(node: string): LogRing {
  const holder = globalThis as Holder;
  holder[ringsKey] ??= new Map();
  let ring = holder[ringsKey].get(node);
  if (!ring) {
    ring = createLogRing();
    holder[ringsKey].set(node, ring);
  }
  return ring;
}

export const vnAgentLogProvider: NodeLogProvider = async (node, options, signal) => {
  const ring = vnAgentLogRing(node);
  return readableOf(
    signal,
    (push) => ring.subscribe(push),
    selectLines(ring.lines(), options),
    options.follow,
  );
};

/** kwok's controller log line (JSON) as "<time> <LEVEL> <msg> k=v…" when it names `node`, else null. */
export function kwokLineFor(node: string, raw: string): string | null {
  if (!raw.includes(node)) return null;
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return null;
  }
  // A field whose whole value is the node (node=, nodeName=, …), not a longer name containing it.
  if (!Object.values(entry).includes(node)) return null;
  const { time, level, msg, source: _source, id: _id, ...rest } = entry;
  const fields = renderFields(rest as LogFields);
  return `${typeof time === "string" ? time : new Date().toISOString()} ${String(level ?? "INFO")} ${String(msg ?? "")}${fields}`;
}

/** Lines of a file, filtered and formatted by `format`, then followed as the file grows. */
export function tailFile(
  file: string,
  format: (raw: string) => string | null,
  options: TailOptions,
  signal: AbortSignal,
  pollMs = 250,
): Readable {
  const maxInitialBytes = 16 * 1024 * 1024;
  let offset = 0;
  let rest = "";
  const read = (): string[] => {
    let size: number;
    try {
      size = fs.statSync(file).size;
    } catch {
      return [];
    }
    if (size < offset) {
      offset = 0; // truncated or replaced
      rest = "";
    }
    if (size === offset) return [];
    const from = offset === 0 ? Math.max(0, size - maxInitialBytes) : offset;
    const buffer = Buffer.alloc(size - from);
    const fd = fs.openSync(file, "r");
    try {
      fs.readSync(fd, buffer, 0, buffer.length, from);
    } finally {
      fs.closeSync(fd);
    }
    offset = size;
    const text = rest + buffer.toString("utf8");
    const parts = text.split("\n");
    rest = parts.pop() ?? "";
    const lines: string[] = [];
    for (const part of parts) {
      const line = format(part);
      if (line !== null) lines.push(line);
    }
    return lines;
  };
  const initial = selectLines(read(), options);
  return readableOf(
    signal,
    (push) => {
      const timer = setInterval(() => {
        for (const line of read()) push(line);
      }, pollMs);
      timer.unref();
      return () => clearInterval(timer);
    },
    initial,
    options.follow,
  );
}

/** kwok's log for a node, from the local super cluster's kwok controller log file. */
export function kwokLogProvider(controllerLogFile: string): NodeLogProvider {
  return async (node, options, signal) => {
    if (!fs.existsSync(controllerLogFile)) {
      throw Object.assign(
        new Error(
          `kwok's log file ${controllerLogFile} does not exist (is the local super cluster running?).`,
        ),
        {
          status: 404,
        },
      );
    }
    return tailFile(controllerLogFile, (raw) => kwokLineFor(node, raw), options, signal);
  };
}
