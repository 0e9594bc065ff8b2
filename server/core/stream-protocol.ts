/**
 * The wire contract of Ring0's browser streams under /ws/ (logs and exec), shared by server.ts's
 * endpoints and the browser components. Pure: zod only, so client components import it as is.
 *
 * Logs  `/ws/logs?<logQuery>`: the server sends JSON text frames (`ServerFrame`); the client may
 *       send `{"type":"pause"}` / `{"type":"resume"}` (a paused stream stops reading upstream).
 * Exec  `/ws/exec?<execQuery>`: the client sends binary frames of stdin bytes and JSON text frames
 *       `{"type":"resize","cols","rows"}`; the server sends binary frames whose first byte is the
 *       channel (1 stdout, 2 stderr) followed by the bytes, and JSON text frames for the rest.
 * A refusal after the upgrade is an `error` frame followed by a close with `closeCodes`.
 */
import { z } from "zod";

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

const label = (what: string) =>
  z
    .string()
    .min(1, `${what} is required`)
    .max(63, `${what} is at most 63 characters`)
    .regex(dnsLabel, `${what} must be a DNS label (lowercase letters, digits and '-')`);
const subdomain = (what: string) =>
  z
    .string()
    .min(1, `${what} is required`)
    .max(253, `${what} is at most 253 characters`)
    .regex(dnsSubdomain, `${what} must be a DNS subdomain (lowercase letters, digits, '-' and '.')`);

const flag = z
  .enum(["0", "1", "true", "false"], { message: "must be 0, 1, true or false" })
  .transform((value) => value === "1" || value === "true");

/** Where a stream reads from. Tenant pods go through the tenant's control plane as the user. */
export const streamSources = [
  "tenant-pod",
  "super-pod",
  "vn-agent",
  "kwok",
  "kubelet",
  "containerd",
] as const;
export type StreamSource = (typeof streamSources)[number];

/** Log lines kept and sent per request at most (the viewer's cap is separate). */
export const maxTailLines = 100_000;

export const logQuery = z
  .object({
    source: z.enum(streamSources, { message: `source must be one of ${streamSources.join(", ")}` }),
    tenant: label("tenant").optional(),
    namespace: label("namespace").optional(),
    pod: subdomain("pod").optional(),
    container: label("container").optional(),
    node: subdomain("node").optional(),
    follow: flag.default(true),
    previous: flag.default(false),
    tailLines: z.coerce
      .number({ message: "tailLines must be a number" })
      .int("tailLines must be a whole number")
      .min(0, "tailLines must be 0 or more")
      .max(maxTailLines, `tailLines is at most ${maxTailLines}`)
      .optional(),
    sinceTime: z.iso.datetime({ offset: true, message: "sinceTime must be an RFC 3339 time" }).optional(),
  })
  .strict()
  .superRefine((query, context) => requireTargets(query, context));

export type LogQuery = z.infer<typeof logQuery>;

export const execShells = ["auto", "bash", "sh"] as const;
export type ExecShell = (typeof execShells)[number];

export const execQuery = z
  .object({
    source: z.enum(["tenant-pod", "super-pod", "node-shell"], {
      message: "source must be tenant-pod, super-pod or node-shell",
    }),
    tenant: label("tenant").optional(),
    namespace: label("namespace").optional(),
    pod: subdomain("pod").optional(),
    container: label("container").optional(),
    node: subdomain("node").optional(),
    shell: z.enum(execShells, { message: `shell must be one of ${execShells.join(", ")}` }).default("auto"),
    cols: z.coerce.number().int().min(1).max(1000).default(80),
    rows: z.coerce.number().int().min(1).max(500).default(24),
  })
  .strict()
  .superRefine((query, context) => requireTargets(query, context));

export type ExecQuery = z.infer<typeof execQuery>;

function requireTargets(
  query: {
    source: StreamSource | "node-shell";
    tenant?: string;
    namespace?: string;
    pod?: string;
    node?: string;
  },
  context: z.RefinementCtx,
): void {
  const need = (field: "tenant" | "namespace" | "pod" | "node") => {
    if (!query[field]) context.addIssue({ code: "custom", path: [field], message: `${field} is required` });
  };
  if (query.source === "tenant-pod") for (const field of ["tenant", "namespace", "pod"] as const) need(field);
  if (query.source === "super-pod") for (const field of ["namespace", "pod"] as const) need(field);
  if (
    query.source === "vn-agent" ||
    query.source === "kwok" ||
    query.source === "kubelet" ||
    query.source === "containerd" ||
    query.source === "node-shell"
  )
    need("node");
}

/** One log line: the container runtime's RFC 3339 (nano) timestamp and the text without it. */
export interface LogLine {
  ts: string;
  text: string;
}

export type ServerFrame =
  | { type: "lines"; lines: LogLine[] }
  | { type: "status"; state: "following" | "paused" | "ended"; message?: string }
  | { type: "error"; status: number; message: string }
  | { type: "started"; sessionId: string; shell: string; container: string }
  | { type: "exit"; code: number | null; reason: string };

export const clientFrame = z.discriminatedUnion("type", [
  z.object({ type: z.literal("pause") }).strict(),
  z.object({ type: z.literal("resume") }).strict(),
  z.object({
    type: z.literal("resize"),
    cols: z.number().int().min(1).max(1000),
    rows: z.number().int().min(1).max(500),
  }),
]);
export type ClientFrame = z.infer<typeof clientFrame>;

export const execChannels = { stdout: 1, stderr: 2 } as const;

/** Close codes after the upgrade: 4000 + the HTTP status the refusal would have had. */
export const closeCodes = {
  badRequest: 4400,
  sessionEnded: 4401,
  forbidden: 4403,
  notFound: 4404,
  idle: 4408,
  maxDuration: 4410,
  tooMany: 4429,
  upstream: 4502,
  unavailable: 4503,
} as const;

/** The query string for a log stream, resuming after `lastTs` when reconnecting. */
export function logStreamPath(query: Partial<Record<keyof LogQuery, string | number | boolean>>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === "") continue;
    params.set(key, typeof value === "boolean" ? (value ? "1" : "0") : String(value));
  }
  return `/ws/logs?${params.toString()}`;
}

/** Human text for a zod failure of a stream query: `field: message; …`. */
export function queryProblem(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ");
}

/**
 * Resuming a log stream without gaps or duplicates. Kubelets accept `sinceTime` with second
 * precision only, so a reconnect asks from the last line's second and drops what was already
 * shown: lines before the last timestamp, and as many lines at exactly that timestamp as were
 * already shown. Pure; unit-tested.
 */
export interface ResumePoint {
  ts: string;
  /** Lines already shown whose timestamp equals `ts`. */
  seenAtTs: number;
}

/**
 * A timestamp in one fixed-width UTC form (nanosecond fraction padded) so that string order is time
 * order: RFC 3339 Nano drops trailing zeros, which would sort `…05.1Z` after `…05.12Z`.
 */
export function normalTimestamp(ts: string): string {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(ts);
  if (!match) return ts;
  const [, seconds = "", fraction = "", zone = "Z"] = match;
  if (zone === "Z") return `${seconds}.${fraction.padEnd(9, "0")}Z`;
  const whole = new Date(`${seconds}${zone}`).toISOString().slice(0, 19);
  return `${whole}.${fraction.padEnd(9, "0")}Z`;
}

export function resumeSinceTime(point: ResumePoint): string {
  return `${normalTimestamp(point.ts).slice(0, 19)}Z`;
}

export function advanceResumePoint(
  point: ResumePoint | undefined,
  lines: readonly LogLine[],
): ResumePoint | undefined {
  let current = point && { ts: normalTimestamp(point.ts), seenAtTs: point.seenAtTs };
  for (const line of lines) {
    if (!line.ts) continue;
    const ts = normalTimestamp(line.ts);
    if (current && ts === current.ts) current = { ts, seenAtTs: current.seenAtTs + 1 };
    else if (!current || ts > current.ts) current = { ts, seenAtTs: 1 };
  }
  return current;
}

/** The lines of a resumed stream that were not shown before `point`. */
export function dropSeen(
  point: ResumePoint,
  lines: readonly LogLine[],
  state: { skippedAtTs: number },
): LogLine[] {
  const fresh: LogLine[] = [];
  const at = normalTimestamp(point.ts);
  for (const line of lines) {
    const ts = line.ts ? normalTimestamp(line.ts) : "";
    if (ts && ts < at) continue;
    if (ts === at && state.skippedAtTs < point.seenAtTs) {
      state.skippedAtTs += 1;
      continue;
    }
    fresh.push(line);
  }
  return fresh;
}
