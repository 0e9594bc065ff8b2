/**
 * A ring of the last lines something logged, and a logger that writes to one as well as to its
 * base: how operators read a component's own log (a vn-agent's, per node) without log files.
 */
import type { LogFields, Logger } from "./logger";

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

export function renderFields(fields: LogFields | undefined): string {
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
