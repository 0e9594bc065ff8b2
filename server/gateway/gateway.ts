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
 *
 * The parts: admit.ts (every check, in that order), proxy-http.ts and proxy-upgrade.ts (over
 * upstream-request.ts' openUpstream), request-record.ts (log lines and audit events) and
 * stream-rights.ts (what ends open streams); this file wires them.
 */
import { type CredentialRechecks, createCredentialRechecks } from "@/server/auth/rechecks";
import { createAdmission } from "./admit";
import type { KubeGateway, KubeGatewayOptions } from "./contract";
import { proxyRequest } from "./proxy-http";
import { proxyUpgrade, type UpgradeContext } from "./proxy-upgrade";
import { createRequestLog } from "./request-record";
import { sendStatus } from "./status";
import { createStreamRights } from "./stream-rights";

export type { GatewaySharing, KubeGateway, KubeGatewayLimits, KubeGatewayOptions } from "./contract";

export function createKubeGateway(options: KubeGatewayOptions): KubeGateway {
  const now = options.now ?? Date.now;
  const log = options.logger;
  const admission = createAdmission({ ...options, now });
  const rechecks: CredentialRechecks =
    options.rechecks ?? createCredentialRechecks({ intervalMs: options.recheckMs, logger: log });
  const requestLog = createRequestLog({
    logger: log,
    audit: options.audit,
    deniedAuditWindowMs: options.deniedAuditWindowMs,
    now,
  });
  const context: UpgradeContext = {
    admit: admission.admit,
    requestLog,
    rights: createStreamRights({ rechecks, sharing: options.sharing, requestLog, logger: log }),
    responseTimeoutMs: options.responseTimeoutMs ?? 90_000,
    streamIdleTimeoutMs: options.streamIdleTimeoutMs ?? 4 * 60 * 60 * 1000,
    maxExecSessionMs: options.maxExecSessionMs ?? 12 * 60 * 60 * 1000,
    halfCloseGraceMs: 10_000,
  };

  return {
    handleRequest(request, response) {
      proxyRequest(context, request, response).catch((error: unknown) => {
        log.error("kube gateway request failed", { url: request.url?.split("?")[0], error });
        sendStatus(response, 500, "internal error in the Ring0 kube gateway");
      });
    },
    handleUpgrade(request, socket, head) {
      proxyUpgrade(context, request, socket, head).catch((error: unknown) => {
        log.error("kube gateway upgrade failed", { url: request.url?.split("?")[0], error });
        socket.destroy();
      });
    },
    close() {
      admission.close();
      if (!options.rechecks) rechecks.close();
    },
  };
}
