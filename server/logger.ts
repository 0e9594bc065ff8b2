/**
 * A small structured logger: one JSON object per line on stdout/stderr, so log shippers parse it
 * and tests can silence it. Children carry context (request id, component) without repeating it.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function configuredLevel(): LogLevel {
  const level = process.env.LOG_LEVEL;
  if (level === "debug" || level === "info" || level === "warn" || level === "error") return level;
  return "info";
}

function serialise(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

export function createLogger(context: LogFields = {}, level: LogLevel = configuredLevel()): Logger {
  const write = (at: LogLevel, message: string, fields?: LogFields) => {
    if (order[at] < order[level]) return;
    const record: LogFields = { time: new Date().toISOString(), level: at, msg: message, ...context };
    for (const [key, value] of Object.entries(fields ?? {})) record[key] = serialise(value);
    const line = `${JSON.stringify(record)}\n`;
    if (at === "error" || at === "warn") process.stderr.write(line);
    else process.stdout.write(line);
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    child: (fields) => createLogger({ ...context, ...fields }, level),
  };
}

export const logger = createLogger({ service: "ring0" });
