/**
 * /ws/logs: a pod's or a node's log, followed, into the browser. Query in server/core/stream-protocol.ts (logQuery).
 * Who may read what is decided before the upgrade (tenant pods: users of that tenant, whose
 * control plane's RBAC then decides; super-cluster pods and nodes: operators only); the cluster's
 * own refusals (RBAC, unknown pod or container) arrive as an error frame and a 44xx close.
 */
import type { WebSocket } from "ws";
import type { z } from "zod";
import { canAccessTenant, isOperator } from "@/server/core/roles";
import {
  clientFrame,
  closeCodes,
  type LogQuery,
  logQuery,
  queryProblem,
  type ServerFrame,
} from "@/server/core/stream-protocol";
import {
  actsAsGrantee,
  decideGranteeAccess,
  podAttributes,
  revokeWhenUngranted,
} from "@/server/sharing/access";
import { createFlow } from "./flow";
import { createBatcher, createLineSplitter, parseLogLine } from "./lines";
import { openLogSource, streamFailure } from "./sources";
import {
  closeReasonOf,
  type StreamContext,
  type StreamEndpoint,
  type StreamRefusal,
  sendError,
} from "./upgrade";

export interface StreamSettings {
  /** Labels pods Ring0 creates in the super cluster need from its runtime (node shells; the local world's kwok exec label). */
  superPodLabels?: Record<string, string>;
  /** The node-shell pod's image (see server/streams/node-shell.ts). */
  nodeShellImage?: string;
  /** Bytes queued for one browser before the upstream is paused. */
  bufferBytes: number;
  /** Any stream is closed after this long. */
  maxSessionMs: number;
  /** A shell with no traffic either way is closed after this long. */
  idleMs: number;
}

export function parseQuery<S extends z.ZodType>(
  schema: S,
  url: URL,
): { ok: true; query: z.output<S> } | { ok: false; refusal: StreamRefusal } {
  const raw: Record<string, string> = {};
  for (const [key, value] of url.searchParams) raw[key] = value;
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, query: parsed.data };
  return {
    ok: false,
    refusal: { status: 400, message: `Bad stream request: ${queryProblem(parsed.error)}.` },
  };
}

/**
 * Who may open a stream on a source, before anything is asked of a cluster. Another tenant's pods
 * answer like a tenant that does not exist (404), as the gateway does; super-cluster pods and
 * nodes are the operators' (403).
 */
export function sourceRefusal(
  query: { source: string; tenant?: string },
  context: { user: StreamContext["user"]; auth: Pick<StreamContext["auth"], "confinedTo"> },
): StreamRefusal | null {
  const { user, auth } = context;
  if (query.source === "tenant-pod") {
    const tenant = query.tenant ?? "";
    if (!canAccessTenant(user, tenant) || (auth.confinedTo !== null && auth.confinedTo !== tenant)) {
      return { status: 404, message: `Tenant "${tenant}" was not found.` };
    }
    return null;
  }
  if (!isOperator(user) || auth.confinedTo !== null) {
    const what = query.source === "super-pod" ? "super-cluster pods" : "node logs and shells";
    return { status: 403, message: `Only operators can open ${what}.` };
  }
  return null;
}

/**
 * The tenant whose stream share a query uses. A grantee's streams count against their own tenant,
 * so a grantee can never use up the owner's share.
 */
export function streamTenant(query: { tenant?: string }, context: Pick<StreamContext, "user">): string {
  if (query.tenant && actsAsGrantee(context.user, query.tenant)) return context.user.tenant;
  return query.tenant ?? context.user.tenant;
}

/** What a stream asks of a tenant's pod, in RBAC's terms (a grant must cover it). */
function streamAttributes(kind: string, query: { namespace?: string; pod?: string }) {
  return kind === "exec"
    ? podAttributes("create", query.namespace ?? "", query.pod ?? "", "exec")
    : podAttributes("get", query.namespace ?? "", query.pod ?? "", "log");
}

/**
 * A user of another tenant opening a stream on the owner's pod: allowed where a live grant covers
 * it (a token only when it is the user's own tenant's); no grant at all reads as not found.
 */
async function granteeRefusal(
  kind: string,
  query: { source: string; tenant?: string; namespace?: string; pod?: string },
  context: Pick<StreamContext, "user" | "auth">,
): Promise<StreamRefusal | null> {
  const tenant = query.tenant ?? "";
  const notFound: StreamRefusal = { status: 404, message: `Tenant "${tenant}" was not found.` };
  const { user, auth } = context;
  if (auth.confinedTo !== null && auth.confinedTo !== user.tenant) return notFound;
  const decision = await decideGranteeAccess(
    user,
    tenant,
    streamAttributes(kind, query),
    kind === "exec" ? "exec" : "logs",
  );
  if (decision.kind === "allow") return null;
  if (decision.kind === "notFound") return notFound;
  return { status: decision.kind === "unavailable" ? 503 : 403, message: decision.message };
}

/**
 * An endpoint whose stream is described by its query string: parsed and checked against
 * sourceRefusal before the upgrade, counted against the caller's tenant, then `run` owns the socket.
 */
export function queryStreamEndpoint<S extends z.ZodType<{ source: string; tenant?: string }>>(
  schema: S,
  kind: string,
  run: (socket: WebSocket, context: StreamContext, query: z.output<S>) => void,
): StreamEndpoint {
  const queries = new WeakMap<StreamContext, z.output<S>>();
  return {
    authorize(context) {
      const parsed = parseQuery(schema, context.url);
      if (!parsed.ok) return parsed.refusal;
      queries.set(context, parsed.query);
      const query = parsed.query as { source: string; tenant?: string; namespace?: string; pod?: string };
      if (query.source === "tenant-pod" && query.tenant && actsAsGrantee(context.user, query.tenant)) {
        return granteeRefusal(kind, query, context);
      }
      return sourceRefusal(parsed.query, context);
    },
    countsAgainst(context) {
      return { tenant: streamTenant(queries.get(context) ?? {}, context), kind };
    },
    open(socket, context) {
      const query = queries.get(context);
      if (!query) {
        socket.close(closeCodes.badRequest, "no query");
        return;
      }
      const target = query as { source: string; tenant?: string; namespace?: string; pod?: string };
      if (target.source === "tenant-pod" && target.tenant && actsAsGrantee(context.user, target.tenant)) {
        // A grantee's stream closes the moment its grant no longer covers it (revoked, expired).
        const stop = revokeWhenUngranted(context.user, target.tenant, streamAttributes(kind, target), () => {
          sendError(socket, 403, `Access to tenant "${target.tenant}" was revoked or has expired.`);
          socket.close(closeCodes.forbidden, "access revoked");
        });
        socket.once("close", stop);
      }
      run(socket, context, query);
    },
  };
}

export function createLogsEndpoint(settings: StreamSettings): StreamEndpoint {
  return queryStreamEndpoint(logQuery, "logs", (socket, context, query) =>
    followLog(socket, context, query, settings),
  );
}

function followLog(
  socket: WebSocket,
  context: StreamContext,
  query: LogQuery,
  settings: StreamSettings,
): void {
  const abort = new AbortController();
  const flow = createFlow(socket, settings.bufferBytes);
  const frame = (value: ServerFrame) => flow.send(JSON.stringify(value));
  const batcher = createBatcher((lines) => frame({ type: "lines", lines }));
  const splitter = createLineSplitter();
  const maxTimer = setTimeout(() => {
    batcher.flush();
    sendError(
      socket,
      410,
      `This stream reached the maximum session length (${Math.round(settings.maxSessionMs / 1000)} s). Reconnect to go on.`,
    );
    socket.close(closeCodes.maxDuration, "maximum session length");
  }, settings.maxSessionMs);
  maxTimer.unref();
  let ended = false;

  const finish = () => {
    if (ended) return;
    ended = true;
    abort.abort();
    batcher.stop();
    flow.stop();
    clearTimeout(maxTimer);
  };
  socket.once("close", finish);

  socket.on("message", (data, isBinary) => {
    let parsed: ReturnType<typeof clientFrame.safeParse> | undefined;
    try {
      parsed = isBinary ? undefined : clientFrame.safeParse(JSON.parse(data.toString()));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success || (parsed.data.type !== "pause" && parsed.data.type !== "resume")) {
      sendError(socket, 400, 'A log stream accepts only {"type":"pause"} and {"type":"resume"} frames.');
      return;
    }
    const hold = parsed.data.type === "pause";
    flow.hold(hold);
    if (!hold) batcher.flush();
    frame({ type: "status", state: hold ? "paused" : "following" });
  });

  openLogSource(query, context.user, abort.signal).then(
    (stream) => {
      if (ended) {
        stream.destroy();
        return;
      }
      flow.attach(stream);
      frame({ type: "status", state: "following" });
      stream.on("data", (chunk: Buffer) => {
        for (const line of splitter.push(chunk)) batcher.add(parseLogLine(line));
      });
      stream.once("end", () => {
        for (const line of splitter.end()) batcher.add(parseLogLine(line));
        batcher.flush();
        frame({
          type: "status",
          state: "ended",
          message: query.follow ? "The log ended (the container stopped)." : undefined,
        });
        socket.close(1000, "log ended");
      });
      stream.once("error", (error) => {
        if (ended) return;
        batcher.flush();
        const failure = streamFailure(error);
        context.logger.info("log stream upstream failed", { error: failure.message });
        sendError(socket, 502, `The log stream broke: ${failure.message}`);
        socket.close(closeCodes.upstream, "upstream failed");
      });
    },
    (error) => {
      if (ended) return;
      const failure = streamFailure(error);
      context.logger.info("log stream refused", { status: failure.status, error: failure.message });
      sendError(socket, failure.status, failure.message);
      socket.close(closeCodeFor(failure.status), closeReasonOf(failure.message));
    },
  );
}

/** The close code for an upstream answer: 4000 + its status where the protocol defines one. */
export function closeCodeFor(status: number): number {
  const known = Object.values(closeCodes) as number[];
  if (known.includes(4000 + status)) return 4000 + status;
  if (status === 422 || status === 409) return closeCodes.badRequest;
  if (status === 401) return closeCodes.forbidden;
  return closeCodes.upstream;
}
