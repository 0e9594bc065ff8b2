/**
 * What the gateway knows of one request, filled in as admission learns it, and what the request
 * leaves behind: one log line, the audit event of a mutation or upgrade, and the audit events of
 * an authenticated token's denials (sampled). Audit is fire and forget: the proxy never waits for
 * the audit log.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { AuditEventInput } from "@/server/audit/repository";
import type { SessionUser } from "@/server/core/roles";
import type { Logger } from "@/server/logger";
import type { RequestAttributes } from "@/server/sharing/request-info";
import type { VerifiedToken } from "@/server/tokens/service";
import { createSampler } from "./rate-limit";
import { auditedVerb, auditResult } from "./requests";

export interface RequestRecord {
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

export function newRecord(request: IncomingMessage, upgrade: boolean): RequestRecord {
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

/** What the end of a request adds to its log line and audit event. */
export interface RequestEnd {
  auditId?: string;
  error?: string;
}

export interface RequestLogOptions {
  logger: Logger;
  /** Records an audit event; must not throw (recordAudit logs its own failures). */
  audit(event: AuditEventInput): Promise<void>;
  /** Window in which repeated gateway denials of one token produce one audit event. */
  deniedAuditWindowMs?: number;
  now: () => number;
}

export function createRequestLog(options: RequestLogOptions) {
  const log = options.logger;
  const deniedSampler = createSampler({ windowMs: options.deniedAuditWindowMs ?? 60_000, now: options.now });

  /** Fire and forget: the proxy never waits for the audit log. */
  function audit(event: AuditEventInput): void {
    options
      .audit(event)
      .catch((error: unknown) => log.error("kube gateway audit failed", { action: event.action, error }));
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
  function finish(record: RequestRecord, status: number, extra: RequestEnd = {}, audited = true) {
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

  /** `finish` of an admitted request, at most once: whichever of its ends comes first tells. */
  function finisher(record: RequestRecord): (status: number, extra?: RequestEnd) => void {
    let finished = false;
    return (status, extra) => {
      if (finished) return;
      finished = true;
      finish(record, status, extra);
    };
  }

  /**
   * Denials by the gateway. Unauthenticated ones are a log line only (anyone can produce them);
   * an authenticated token's denials are audited, at most one event per token and code a window.
   */
  function finishDenied(record: RequestRecord, denial: { code: number; message: string }) {
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

  return { audit, auditEvent, finisher, finishDenied };
}

export type RequestLog = ReturnType<typeof createRequestLog>;
