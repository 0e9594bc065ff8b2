/**
 * The kube gateway: `kubectl` against `https://<ring0>/k8s/tenants/<tenant>` with a Ring0 API token.
 *
 * Order matters and is the security argument: parse the path strictly (nothing looked up yet) →
 * refuse an address or token with too many failed authentications (before any lookup) →
 * authenticate the bearer token → the token's tenant must be the path's tenant (otherwise the
 * answer is the one for a tenant that does not exist) → per-token limits → find the tenant's
 * control plane → forward with the client's identity headers removed and the Ring0 user
 * impersonated, over TLS with the control plane's admin certificate. Bodies stream both ways,
 * watches included; upgrades (exec, attach, port-forward over SPDY or WebSocket) are spliced
 * socket to socket once the tenant API server switched protocols. What stays open (watches,
 * followed logs, upgrades) ends as soon as its right does: the token's owner is rechecked every
 * few seconds (server/auth/rechecks.ts), a grantee's grants on every change; exec and attach
 * sessions also end after a maximum length.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import https from "node:https";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { pipeline } from "node:stream";
import type { AuditEventInput } from "@/server/audit/repository";
import {
  type CredentialRechecks,
  createCredentialRechecks,
  type HeldCredential,
  type LostRight,
} from "@/server/auth/rechecks";
import type { SessionUser } from "@/server/core/roles";
import type { Logger } from "@/server/logger";
import { actsAsGrantee, decideGranteeAccess, type GranteeVerdict } from "@/server/sharing/access";
import type { GranteeUser } from "@/server/sharing/grants";
import { ambiguousQuery, type RequestAttributes, requestAttributes } from "@/server/sharing/request-info";
import type { GrantUse } from "@/server/sharing/usage";
import type { ControlPlaneDirectory } from "@/server/tenants/control-planes";
import { hashToken, tokenPrefix } from "@/server/tokens/format";
import type { VerifiedToken } from "@/server/tokens/service";
import { impersonationOf } from "./as-user";
import { bearerToken, clientResponseHeaders, upstreamRequestHeaders } from "./headers";
import { parseGatewayPath } from "./path";
import {
  createAuthFailureLimiter,
  createConcurrencyLimiter,
  createRateLimiter,
  createSampler,
} from "./rate-limit";
import { auditedVerb, auditResult, isLongRunning } from "./requests";
import { sendStatus, statusOnSocket } from "./status";
import { createUpstreamPool, type Upstream } from "./upstream";

export interface KubeGatewayLimits {
  /** Requests per second per token (sustained). */
  ratePerSecond: number;
  /** Requests a token may make at once. */
  burst: number;
  /** Concurrent watches, followed logs and upgrades per token. */
  maxLongRunning: number;
  /** Failed authentications per source address, and per presented token, a minute (default 30). */
  authFailuresPerMinute?: number;
}

/** Sharing grants: how a token of one tenant reaches another (server/sharing/access.ts). */
export interface GatewaySharing {
  verdict(user: GranteeUser, owner: string, attributes: RequestAttributes): Promise<GranteeVerdict>;
  /** Calls `revoke` once the grants stop allowing the request; returns the function that stops watching. */
  watch(user: GranteeUser, owner: string, attributes: RequestAttributes, revoke: () => void): () => void;
  recordUse(use: GrantUse): void;
}

export interface KubeGatewayOptions {
  /** Verifies a Ring0 API token (createTokenService(...).verifyToken). */
  authenticate(plaintext: string): Promise<VerifiedToken | null>;
  /** Verifies again for an open stream's recheck, past any cache `authenticate` keeps (default: it). */
  reauthenticate?(plaintext: string): Promise<VerifiedToken | null>;
  /** Where open streams' tokens are rechecked (default: the gateway's own, every `recheckMs`). */
  rechecks?: CredentialRechecks;
  /** How often open streams' tokens are rechecked when the gateway keeps its own (default 5 s). */
  recheckMs?: number;
  /** Exec and attach sessions end after this long (default 12 h, as RING0_STREAM_MAX_SECONDS). */
  maxExecSessionMs?: number;
  /** The control plane directory in force (read per request: it is installed at start-up). */
  directory(): ControlPlaneDirectory | null;
  limits: KubeGatewayLimits;
  /** Records an audit event; must not throw (recordAudit logs its own failures). */
  audit(event: AuditEventInput): Promise<void>;
  logger: Logger;
  now?: () => number;
  /** Until the tenant API server's response headers (or 101) arrive. */
  responseTimeoutMs?: number;
  /** An exec/attach/port-forward session with no traffic either way for this long is closed. */
  streamIdleTimeoutMs?: number;
  /** Window in which repeated gateway denials of one token produce one audit event. */
  deniedAuditWindowMs?: number;
  /** Without it, a token reaches its own tenant only. */
  sharing?: GatewaySharing;
}

export interface KubeGateway {
  handleRequest(request: IncomingMessage, response: ServerResponse): void;
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
}

type Denial = { denied: true; code: number; message: string; retryAfterSeconds?: number };

interface Admitted {
  denied: false;
  tenant: string;
  apiPath: string;
  upstreamPath: string;
  verified: VerifiedToken;
  /** The token as open streams hold it, to be rechecked while they last. */
  credential: HeldCredential;
  /** A watch, a followed log or an upgrade: it stays open, so its right is rechecked. */
  longRunning: boolean;
  upstream: Upstream;
  release: () => void;
}

/** Why the gateway ends an open stream itself. */
type StreamEnd = LostRight | "grant-ended" | "max-session";

const streamEndReasons: Record<StreamEnd, string> = {
  "credential-invalid":
    "its token was revoked or expired, or its owner was removed from the tenant or disabled",
  "role-changed": "its owner's role changed since it was opened",
  "grant-ended": "its sharing grant no longer covers it",
  "max-session": "it reached the maximum session length",
};

interface RequestRecord {
  requestId: string;
  /** The grant a grantee's request was admitted under (null: discovery), undefined for members. */
  grant?: string | null;
  /** A grantee's request in RBAC's terms. */
  attributes?: RequestAttributes;
  method: string;
  apiPath: string;
  /** The tenant once the request is known to be for the token's own tenant. */
  tenant?: string;
  /** The tenant segment of the path, whatever it names. */
  requestedTenant?: string;
  verified?: VerifiedToken;
  userAgent?: string;
  /** `?dryRun=All`: audited like the change it would be, but marked so it reads as a trial. */
  dryRun: boolean;
  started: number;
  upgrade: boolean;
}

const hostname = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

function serialiseHead(code: number, statusMessage: string, headers: OutgoingHttpHeaders): string {
  const lines = [`HTTP/1.1 ${code} ${statusMessage}`];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${item}`);
  }
  return `${lines.join("\r\n")}\r\n\r\n`;
}

export function createKubeGateway(options: KubeGatewayOptions): KubeGateway {
  const now = options.now ?? Date.now;
  const log = options.logger;
  const responseTimeoutMs = options.responseTimeoutMs ?? 90_000;
  const streamIdleTimeoutMs = options.streamIdleTimeoutMs ?? 4 * 60 * 60 * 1000;
  /** After one side of a spliced stream ends, how long the other may take to flush and close. */
  const halfCloseGraceMs = 10_000;
  const rate = createRateLimiter({
    ratePerSecond: options.limits.ratePerSecond,
    burst: options.limits.burst,
    now,
  });
  const longRunning = createConcurrencyLimiter(options.limits.maxLongRunning);
  const authFailures = createAuthFailureLimiter({
    failuresPerMinute: options.limits.authFailuresPerMinute ?? 30,
    now,
  });
  const reauthenticate = options.reauthenticate ?? options.authenticate;
  const rechecks: CredentialRechecks =
    options.rechecks ?? createCredentialRechecks({ intervalMs: options.recheckMs, logger: log });
  const maxExecSessionMs = options.maxExecSessionMs ?? 12 * 60 * 60 * 1000;
  const deniedSampler = createSampler({ windowMs: options.deniedAuditWindowMs ?? 60_000, now });
  const pool = createUpstreamPool();

  /** Fire and forget: the proxy never waits for the audit log. */
  function audit(event: AuditEventInput): void {
    options
      .audit(event)
      .catch((error: unknown) => log.error("kube gateway audit failed", { action: event.action, error }));
  }

  function deny(code: number, message: string, retryAfterSeconds?: number): Denial {
    return { denied: true, code, message, retryAfterSeconds };
  }

  /** Everything before a byte goes upstream; on success the caller must call `release`. */
  async function admit(request: IncomingMessage, record: RequestRecord): Promise<Denial | Admitted> {
    const parsed = parseGatewayPath(request.url);
    if (!parsed.ok) return deny(parsed.status, parsed.message);
    record.apiPath = parsed.apiPath;
    record.requestedTenant = parsed.tenant;

    const plaintext = bearerToken(request.headers);
    if (!plaintext) {
      return deny(401, "Unauthorized: send a Ring0 API token as Authorization: Bearer r0_…");
    }
    // Failed authentications are counted by address and by token; over budget, nothing is looked up.
    const address = request.socket.remoteAddress ?? "unknown";
    const tokenKey = hashToken(plaintext);
    const prefix = tokenPrefix(plaintext);
    const held = authFailures.refusal(address, tokenKey, prefix);
    if (held) {
      return deny(
        429,
        `Too many failed authentications from this address or with this token; retry after ${held.retryAfterSeconds}s.`,
        held.retryAfterSeconds,
      );
    }
    let verified: VerifiedToken | null;
    try {
      verified = await options.authenticate(plaintext);
    } catch (error) {
      log.error("kube gateway could not verify a token", { error });
      return deny(503, "Ring0 cannot verify API tokens right now; try again shortly.");
    }
    if (!verified) {
      authFailures.failed(address, tokenKey, prefix);
      return deny(401, "Unauthorized: the Ring0 API token is invalid, expired or revoked.");
    }
    authFailures.succeeded(tokenKey);
    record.verified = verified;
    const credential: HeldCredential = {
      key: `token:${verified.token.id}`,
      current: async () => (await reauthenticate(plaintext))?.user ?? null,
    };

    // A token reaches its own tenant, and another only within a live sharing grant; without one,
    // any other tenant reads exactly like a missing one.
    const notFound = deny(404, `tenant "${parsed.tenant}" not found`);
    const grantee = verified.token.tenant !== parsed.tenant;
    if (grantee) {
      const sharing = options.sharing;
      const user = verified.user;
      if (!sharing || !actsAsGrantee(user, parsed.tenant) || user.tenant !== verified.token.tenant)
        return notFound;
      if (ambiguousQuery(parsed.upstreamPath.split("?").slice(1).join("?"))) {
        return deny(
          400,
          "Bad request: a query with ';' or a malformed %-escape is ambiguous; send a plain one.",
        );
      }
      const attributes = requestAttributes(record.method, parsed.apiPath, parsed.query, record.upgrade);
      const access = await decideGranteeAccess(user, parsed.tenant, attributes, "kubectl", sharing);
      if (access.kind === "unavailable") {
        log.error("kube gateway could not read sharing grants", { error: access.cause });
        return deny(503, access.message);
      }
      if (access.kind === "notFound") return notFound;
      record.tenant = parsed.tenant;
      record.attributes = attributes;
      if (access.kind === "forbidden") return deny(403, access.message);
      record.grant = access.grant;
    }
    record.tenant = parsed.tenant;

    const decision = rate.take(verified.token.id);
    if (!decision.allowed) {
      return deny(
        429,
        `Too many requests with this Ring0 API token; retry after ${decision.retryAfterSeconds}s.`,
        decision.retryAfterSeconds,
      );
    }

    const directory = options.directory();
    if (!directory) return deny(503, "Tenant control planes are not available yet; try again shortly.");
    let lookup: Awaited<ReturnType<ControlPlaneDirectory["lookup"]>>;
    try {
      lookup = await directory.lookup(parsed.tenant);
    } catch (error) {
      log.error("kube gateway could not look up a control plane", { tenant: parsed.tenant, error });
      return deny(503, `The control plane of tenant "${parsed.tenant}" cannot be reached right now.`);
    }
    if (lookup.state === "absent") {
      pool.drop(parsed.tenant);
      return notFound;
    }
    if (lookup.state === "unavailable") {
      // A grantee (admitted above by a grant) learns the phase only: why the owner's control
      // plane is not serving is the owner's and the operators' to read.
      return deny(
        503,
        grantee
          ? `The control plane of tenant "${parsed.tenant}" is not serving right now (${lookup.phase}); try again later.`
          : `The control plane of tenant "${parsed.tenant}" is not serving (${lookup.phase}): ${lookup.message}`,
      );
    }

    let release = () => {};
    const long = record.upgrade || isLongRunning(record.method, parsed.apiPath, parsed.query);
    if (long) {
      const acquired = longRunning.acquire(verified.token.id);
      if (!acquired) {
        return deny(
          429,
          `Too many concurrent watches and sessions with this Ring0 API token (limit ${options.limits.maxLongRunning}).`,
          5,
        );
      }
      release = acquired;
    }
    let upstream: Upstream;
    try {
      upstream = pool.get(parsed.tenant, lookup.access);
    } catch (error) {
      release();
      log.error("kube gateway cannot use a control plane's access", { tenant: parsed.tenant, error });
      return deny(502, `The control plane of tenant "${parsed.tenant}" is misconfigured.`);
    }
    return {
      denied: false,
      tenant: parsed.tenant,
      apiPath: parsed.apiPath,
      upstreamPath: parsed.upstreamPath,
      verified,
      credential,
      longRunning: long,
      upstream,
      release,
    };
  }

  /**
   * What stays open ends the moment its right does: a long-running request (watch, followed log,
   * upgrade) once its token's owner no longer carries it, whoever they are; a grantee's request
   * once the grants stop covering it. `end` runs at most once; returns the function that stops
   * watching.
   */
  function endWhenRightEnds(
    record: RequestRecord,
    admitted: Admitted,
    end: (why: StreamEnd) => void,
  ): () => void {
    let ended = false;
    const endOnce = (why: StreamEnd) => {
      if (ended) return;
      ended = true;
      endedStream(record, admitted, why);
      end(why);
    };
    // Every admitted request is held, not only those classified long-running: a request the API
    // server keeps open for other reasons (a proxied stream) ends with its right too. The cost is one
    // check per credential and round, however many requests it holds.
    const stopRecheck = rechecks.hold(admitted.credential, admitted.verified.user, endOnce);
    const sharing = options.sharing;
    const stopGrantWatch =
      sharing && record.grant !== undefined && record.attributes
        ? sharing.watch(admitted.verified.user, admitted.tenant, record.attributes, () =>
            endOnce("grant-ended"),
          )
        : () => {};
    return () => {
      stopRecheck();
      stopGrantWatch();
    };
  }

  /** The log line of a stream the gateway ended, and the audit event when its start was audited. */
  function endedStream(record: RequestRecord, admitted: Admitted, why: StreamEnd) {
    const reason = streamEndReasons[why];
    log.info("kube gateway closed a stream", {
      reason,
      requestId: record.requestId,
      tenant: admitted.tenant,
      path: record.apiPath,
      tokenPrefix: admitted.verified.token.prefix,
    });
    if (!record.upgrade) return;
    audit({
      ...auditEvent(record, admitted.verified, admitted.tenant, "k8s.stream-ended", 200),
      result: why === "max-session" ? "success" : "denied",
      detail: {
        method: record.method,
        tokenPrefix: admitted.verified.token.prefix,
        userAgent: record.userAgent ?? null,
        reason: why,
        message: `The gateway ended this stream: ${reason}.`,
        ...(record.grant ? { grant: record.grant } : {}),
      },
    });
  }

  function newRecord(request: IncomingMessage, upgrade: boolean): RequestRecord {
    const agent = request.headers["user-agent"];
    return {
      requestId: randomUUID(),
      method: (request.method ?? "GET").toUpperCase(),
      apiPath: ((request.url ?? "").split("?")[0] ?? "").slice(0, 512),
      userAgent: typeof agent === "string" ? agent.slice(0, 200) : undefined,
      dryRun: /[?&]dryRun=All(&|$)/.test(request.url ?? ""),
      started: performance.now(),
      upgrade,
    };
  }

  function auditEvent(
    record: RequestRecord,
    verified: VerifiedToken,
    tenant: string,
    action: string,
    status: number,
    extra: Record<string, unknown> = {},
  ): AuditEventInput {
    const user: SessionUser = verified.user;
    return {
      actorId: user.id,
      actorName: user.name,
      actorTenant: user.tenant,
      tenant,
      action,
      targetKind: "k8s-api",
      target: record.apiPath.slice(0, 1000),
      result: auditResult(status),
      requestId: record.requestId,
      detail: {
        method: record.method,
        status,
        tokenPrefix: verified.token.prefix,
        userAgent: record.userAgent ?? null,
        ...(record.dryRun ? { dryRun: true } : {}),
        ...(record.grant ? { grant: record.grant } : {}),
        ...extra,
      },
    };
  }

  /** One log line per request, and the audit event of a mutation or upgrade. */
  function finish(
    record: RequestRecord,
    status: number,
    extra: { auditId?: string; error?: string } = {},
    audited = true,
  ) {
    const durationMs = Math.round(performance.now() - record.started);
    log.info("kube gateway request", {
      requestId: record.requestId,
      method: record.method,
      path: record.apiPath,
      tenant: record.tenant ?? null,
      ...(record.requestedTenant !== record.tenant ? { requestedTenant: record.requestedTenant } : {}),
      status,
      durationMs,
      upgrade: record.upgrade || undefined,
      tokenPrefix: record.verified?.token.prefix ?? null,
      ...(extra.error ? { error: extra.error } : {}),
    });
    if (!audited || !record.verified || !record.tenant) return;
    const verb = auditedVerb(record.method, record.apiPath, record.upgrade);
    if (!verb) return;
    audit(
      auditEvent(record, record.verified, record.tenant, `k8s.${verb}`, status, {
        ...(extra.auditId ? { kubeAuditId: extra.auditId } : {}),
      }),
    );
  }

  /**
   * Denials by the gateway. Unauthenticated ones are a log line only (anyone can produce them);
   * an authenticated token's denials are audited, at most one event per token and code a window.
   */
  function finishDenied(record: RequestRecord, denial: Denial) {
    finish(record, denial.code, {}, false);
    const verified = record.verified;
    // A grantee refused outside their grants: the owner's audit log shows what was tried.
    const outsideGrant =
      denial.code === 403 && record.attributes !== undefined && record.tenant !== undefined;
    if (!verified || !([404, 429].includes(denial.code) || outsideGrant)) return;
    const admitted = deniedSampler.admit(`${verified.token.id}:${denial.code}`);
    if (!admitted) return;
    const reason =
      denial.code === 429 ? "rate-limited" : outsideGrant ? "outside-grant" : "tenant-mismatch-or-absent";
    audit({
      ...auditEvent(
        record,
        verified,
        outsideGrant && record.tenant ? record.tenant : verified.token.tenant,
        "k8s.gateway-denied",
        denial.code,
      ),
      result: "denied",
      detail: {
        method: record.method,
        status: denial.code,
        tokenPrefix: verified.token.prefix,
        userAgent: record.userAgent ?? null,
        reason,
        ...(outsideGrant ? { message: denial.message } : {}),
        // The tenant asked for, when it is not the token's own (a probe of another tenant).
        requestedTenant: record.requestedTenant ?? null,
        suppressedSinceLast: admitted.suppressed,
      },
    });
  }

  function upstreamOptions(
    admitted: Admitted,
    method: string,
    headers: OutgoingHttpHeaders,
  ): https.RequestOptions {
    const { url, basePath, agent } = admitted.upstream;
    return {
      agent,
      protocol: "https:",
      hostname: hostname(url),
      port: url.port || 443,
      method,
      path: basePath + admitted.upstreamPath,
      headers,
    };
  }

  /** Absolute redirects to the tenant API server point back through the gateway instead. */
  function rewriteLocation(headers: OutgoingHttpHeaders, admitted: Admitted) {
    const location = headers.location;
    if (typeof location !== "string") return;
    const origin = `${admitted.upstream.url.origin}${admitted.upstream.basePath}`;
    if (location.startsWith(`${origin}/`)) {
      headers.location = `/k8s/tenants/${admitted.tenant}${location.slice(origin.length)}`;
    } else if (/^[a-z][a-z0-9+.-]*:/i.test(location)) {
      delete headers.location;
    }
  }

  async function proxyRequest(request: IncomingMessage, response: ServerResponse) {
    const record = newRecord(request, false);
    let finished = false;
    const done = (status: number, extra?: { auditId?: string; error?: string }) => {
      if (finished) return;
      finished = true;
      finish(record, status, extra);
    };
    const admitted = await admit(request, record);
    if (admitted.denied) {
      finishDenied(record, admitted);
      sendStatus(response, admitted.code, admitted.message, admitted.retryAfterSeconds);
      request.resume();
      return;
    }
    const headers = upstreamRequestHeaders(request.headers, {
      impersonate: impersonationOf(admitted.tenant, admitted.verified.user),
      host: admitted.upstream.url.host,
      clientAddress: request.socket.remoteAddress,
      upgrade: false,
    });
    const upstreamRequest = https.request(upstreamOptions(admitted, record.method, headers));
    upstreamRequest.setTimeout(responseTimeoutMs, () =>
      upstreamRequest.destroy(new Error("the tenant API server did not answer in time")),
    );
    let endedBecause: StreamEnd | undefined;
    // A chunked watch or log cannot carry a Status mid-stream: the client sees it end, reconnects,
    // and is then told why (401, 403, 404).
    const stopWatching = endWhenRightEnds(record, admitted, (why) => {
      endedBecause = why;
      upstreamRequest.destroy();
      response.destroy();
    });
    response.on("close", () => {
      admitted.release();
      stopWatching();
      if (!response.writableFinished) {
        upstreamRequest.destroy();
        // A watch the client stops is a normal end: log the status it was served with.
        done(response.headersSent ? response.statusCode : 499, {
          error: endedBecause ? `ended by the gateway: ${endedBecause}` : "client closed the connection",
        });
      }
    });
    upstreamRequest.on("response", (upstreamResponse) => {
      const status = upstreamResponse.statusCode ?? 502;
      const auditId = upstreamResponse.headers["audit-id"];
      if (
        isLongRunning(
          record.method,
          admitted.apiPath,
          new URLSearchParams(admitted.upstreamPath.split("?")[1]),
        )
      ) {
        upstreamRequest.setTimeout(0);
      }
      const responseHeaders = clientResponseHeaders(upstreamResponse.headers);
      rewriteLocation(responseHeaders, admitted);
      response.writeHead(status, upstreamResponse.statusMessage, responseHeaders);
      response.flushHeaders();
      pipeline(upstreamResponse, response, (error) => {
        done(status, {
          auditId: typeof auditId === "string" ? auditId : undefined,
          ...(error && !response.writableFinished ? { error: error.message } : {}),
        });
      });
    });
    upstreamRequest.on("error", (error) => {
      if (!response.headersSent) {
        sendStatus(
          response,
          502,
          `The control plane of tenant "${admitted.tenant}" could not be reached: ${error.message}`,
        );
        done(502, { error: error.message });
      } else {
        response.destroy();
        done(response.statusCode, { error: error.message });
      }
    });
    pipeline(request, upstreamRequest, (error) => {
      if (error) upstreamRequest.destroy(error);
    });
  }

  async function proxyUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer) {
    const record = newRecord(request, true);
    let finished = false;
    const done = (status: number, extra?: { auditId?: string; error?: string }) => {
      if (finished) return;
      finished = true;
      finish(record, status, extra);
    };
    socket.on("error", () => socket.destroy());
    const admitted = await admit(request, record);
    if (admitted.denied) {
      finishDenied(record, admitted);
      socket.end(statusOnSocket(admitted.code, admitted.message, admitted.retryAfterSeconds));
      return;
    }
    if (socket.destroyed) {
      admitted.release();
      done(499, { error: "client closed the connection" });
      return;
    }
    const headers = upstreamRequestHeaders(request.headers, {
      impersonate: impersonationOf(admitted.tenant, admitted.verified.user),
      host: admitted.upstream.url.host,
      clientAddress: request.socket.remoteAddress,
      upgrade: true,
    });
    // On 101 Node detaches the socket from the agent's pool; it is this session's alone.
    const upstreamRequest = https.request(upstreamOptions(admitted, record.method, headers));
    upstreamRequest.setTimeout(responseTimeoutMs, () =>
      upstreamRequest.destroy(new Error("the tenant API server did not answer in time")),
    );
    let spliced = false;
    const closeBeforeSplice = () => {
      if (!spliced) {
        upstreamRequest.destroy();
        admitted.release();
        done(499, { error: "client closed the connection" });
      }
    };
    socket.once("close", closeBeforeSplice);

    upstreamRequest.on("upgrade", (upstreamResponse, upstreamSocket, upstreamHead) => {
      spliced = true;
      socket.off("close", closeBeforeSplice);
      upstreamRequest.setTimeout(0);
      const auditId = upstreamResponse.headers["audit-id"];
      const status = upstreamResponse.statusCode ?? 101;
      let closed = false;
      let stopWatching = () => {};
      let maxSession: NodeJS.Timeout | undefined;
      const closeBoth = () => {
        if (closed) return;
        closed = true;
        stopWatching();
        clearTimeout(maxSession);
        socket.destroy();
        upstreamSocket.destroy();
        admitted.release();
      };
      stopWatching = endWhenRightEnds(record, admitted, closeBoth);
      const verb = auditedVerb(record.method, record.apiPath, true);
      if (verb === "exec" || verb === "attach") {
        // A shell left open is a door left open: it ends after the maximum session length.
        maxSession = setTimeout(() => {
          if (closed) return;
          endedStream(record, admitted, "max-session");
          closeBoth();
        }, maxExecSessionMs);
        maxSession.unref();
      }
      if (socket.destroyed) {
        closeBoth();
        done(499, { error: "client closed the connection" });
        return;
      }
      socket.write(
        serialiseHead(
          status,
          upstreamResponse.statusMessage ?? "Switching Protocols",
          clientResponseHeaders(upstreamResponse.headers, true),
        ),
      );
      if (upstreamHead.length > 0) socket.write(upstreamHead);
      if (head.length > 0) upstreamSocket.write(head);
      for (const side of [socket, upstreamSocket]) {
        side.on("close", closeBoth);
        side.on("error", closeBoth);
        // One side finished: pipe() ends the other, which flushes what is still buffered for it (the
        // stream's last frames: exec's status, the WebSocket close). Destroying at once dropped them
        // (kubectl exec: "close 1006 (abnormal closure)"). Destroy only if the other never closes.
        side.on("end", () => setTimeout(closeBoth, halfCloseGraceMs).unref());
      }
      if (socket instanceof Socket) socket.setTimeout(streamIdleTimeoutMs, closeBoth);
      upstreamSocket.setTimeout(streamIdleTimeoutMs, closeBoth);
      upstreamSocket.pipe(socket);
      socket.pipe(upstreamSocket);
      done(status, { auditId: typeof auditId === "string" ? auditId : undefined });
    });

    // The tenant API server refused to switch (403 from RBAC, 404 for a missing pod…): relay that.
    upstreamRequest.on("response", (upstreamResponse) => {
      const status = upstreamResponse.statusCode ?? 502;
      const chunks: Buffer[] = [];
      let size = 0;
      upstreamResponse.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= 64 * 1024) chunks.push(chunk);
      });
      upstreamResponse.on("end", () => {
        const body = Buffer.concat(chunks);
        const responseHeaders = clientResponseHeaders(upstreamResponse.headers);
        delete responseHeaders["content-length"];
        rewriteLocation(responseHeaders, admitted);
        responseHeaders["content-length"] = String(body.length);
        responseHeaders.connection = "close";
        spliced = true;
        socket.off("close", closeBeforeSplice);
        admitted.release();
        if (!socket.destroyed)
          socket.end(
            Buffer.concat([
              Buffer.from(serialiseHead(status, upstreamResponse.statusMessage ?? "", responseHeaders)),
              body,
            ]),
          );
        const auditId = upstreamResponse.headers["audit-id"];
        done(status, { auditId: typeof auditId === "string" ? auditId : undefined });
      });
      upstreamResponse.on("error", () => socket.destroy());
    });
    upstreamRequest.on("error", (error) => {
      if (spliced) return;
      spliced = true;
      socket.off("close", closeBeforeSplice);
      admitted.release();
      if (!socket.destroyed) {
        socket.end(
          statusOnSocket(
            502,
            `The control plane of tenant "${admitted.tenant}" could not be reached: ${error.message}`,
          ),
        );
      }
      done(502, { error: error.message });
    });
    upstreamRequest.end();
  }

  return {
    handleRequest(request, response) {
      proxyRequest(request, response).catch((error: unknown) => {
        log.error("kube gateway request failed", { url: request.url?.split("?")[0], error });
        sendStatus(response, 500, "internal error in the Ring0 kube gateway");
      });
    },
    handleUpgrade(request, socket, head) {
      proxyUpgrade(request, socket, head).catch((error: unknown) => {
        log.error("kube gateway upgrade failed", { url: request.url?.split("?")[0], error });
        socket.destroy();
      });
    },
    close() {
      pool.close();
      if (!options.rechecks) rechecks.close();
    },
  };
}
