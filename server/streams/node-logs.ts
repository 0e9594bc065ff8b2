/**
 * Node logs for operators: what the vn-agent serving a node logged (kept in a ring per node in this
 * process), what kwok — the local super cluster's kubelet for every simulated node — logged about
 * the node (its controller's JSON log file, filtered to lines naming the node), and a real node's
 * kubelet and containerd logs (their files under the state dir). Both stream as
 * "<RFC 3339> <text>\n" lines, with tail, since and follow like a pod log.
 */
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { realNodeIndex, realNodesDir } from "@/server/cluster/real-node/plan";
import { normalTimestamp } from "@/server/core/stream-protocol";
import { renderFields } from "@/server/log-ring";
import type { LogFields } from "@/server/logger";
import { vnAgentLogRing } from "@/server/vn-agent/log-rings";
import { type NodeLogProvider, StreamError } from "./sources";

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

/**
 * A klog line ("I1126 00:06:07.123456    1234 file.go:12] msg") as "<RFC 3339> I msg", or a
 * logrus one ('time="…" level=warning msg="…"') as "<time> warning msg=…"; other lines keep their
 * text under the time they were read. The year of a klog line is the current one.
 */
export function componentLine(raw: string, now = new Date()): string | null {
  if (raw.trim() === "") return null;
  const klog = /^([IWEF])(\d{2})(\d{2}) (\d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ ([^\]]+)\] (.*)$/.exec(raw);
  if (klog) {
    const [, level, month, day, time, source, message] = klog;
    return `${now.getUTCFullYear()}-${month}-${day}T${time}Z ${level} ${message} (${source})`;
  }
  const logrus = /^time="([^"]+)" level=(\w+) (.*)$/.exec(raw);
  if (logrus) return `${logrus[1]} ${logrus[2]} ${logrus[3]}`;
  return `${now.toISOString()} ${raw}`;
}

/**
 * A real node's kubelet or containerd log (<stateDir>/real-nodes/<node>/logs/<component>.log).
 * Only Ring0's real node names are accepted, so the node parameter never names another path.
 */
export function realNodeLogProvider(stateDir: string, component: "kubelet" | "containerd"): NodeLogProvider {
  return async (node, options, signal) => {
    if (realNodeIndex(node) === undefined) {
      throw new StreamError(
        404,
        `Node ${node} is not a real node of the local super cluster: it has no ${component} log.`,
      );
    }
    const file = path.join(realNodesDir(stateDir), node, "logs", `${component}.log`);
    if (!fs.existsSync(file))
      throw new StreamError(404, `Node ${node} has no ${component} log (is it running?).`);
    return tailFile(file, (raw) => componentLine(raw), options, signal);
  };
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
