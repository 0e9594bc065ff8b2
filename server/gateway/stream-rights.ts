/**
 * What stays open ends the moment its right does: a long-running request (watch, followed log,
 * upgrade) once its token's owner no longer carries it (rechecked every few seconds,
 * server/auth/rechecks.ts), whoever they are; a grantee's request once the grants stop covering
 * it; an exec or attach session after the maximum session length.
 */
import type { CredentialRechecks, LostRight } from "@/server/auth/rechecks";
import type { Logger } from "@/server/logger";
import type { Admitted } from "./admit";
import type { GatewaySharing } from "./contract";
import type { RequestLog, RequestRecord } from "./request-record";

/** Why the gateway ends an open stream itself. */
export type StreamEnd = LostRight | "grant-ended" | "max-session";

const streamEndReasons: Record<StreamEnd, string> = {
  "credential-invalid":
    "its token was revoked or expired, or its owner was removed from the tenant or disabled",
  "role-changed": "its owner's role changed since it was opened",
  "grant-ended": "its sharing grant no longer covers it",
  "max-session": "it reached the maximum session length",
};

export interface StreamRightsOptions {
  rechecks: CredentialRechecks;
  sharing?: GatewaySharing;
  requestLog: RequestLog;
  logger: Logger;
}

export function createStreamRights(options: StreamRightsOptions) {
  const { rechecks, requestLog, logger: log } = options;

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
    requestLog.audit({
      ...requestLog.auditEvent(record, admitted.verified, admitted.tenant, "k8s.stream-ended", 200),
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

  /**
   * Calls `end` once the request's right ends (at most once); returns the function that stops
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

  return { endWhenRightEnds, endedStream };
}

export type StreamRights = ReturnType<typeof createStreamRights>;
