/**
 * The kube gateway as the runtime wires it: tokens from the process-wide database, the installed
 * control plane directory, limits from the environment, audit through recordAudit, and the live
 * sharing grants.
 */
import { recordAudit } from "@/server/audit/service";
import { getDb } from "@/server/db/client";
import type { Env } from "@/server/env";
import type { Logger } from "@/server/logger";
import { liveSharing } from "@/server/sharing/access";
import { getControlPlaneDirectory } from "@/server/tenants/control-planes";
import { createTokenService } from "@/server/tokens/service";
import { createKubeGateway, type KubeGateway } from "./gateway";
import { cachingVerifier } from "./token-cache";

export { createKubeGateway, type KubeGateway, type KubeGatewayOptions } from "./gateway";
export { refuseGatewayOverPlainHttp } from "./listener";
export { isGatewayPath } from "./path";

export function startKubeGateway(config: Env, logger: Logger): KubeGateway {
  // The process-wide client is resolved per request: the runtime may point it elsewhere after start.
  // Successes are reused for 2 s (token-cache.ts): revocation and role changes apply within that to
  // new requests; open streams are rechecked past the cache, which their answer then refreshes.
  const tokens = cachingVerifier((plaintext) => createTokenService({ db: getDb() }).verifyToken(plaintext));
  return createKubeGateway({
    authenticate: tokens,
    reauthenticate: tokens.refresh,
    // One length for every interactive session, the browser's shells and kubectl exec alike.
    maxExecSessionMs: config.RING0_STREAM_MAX_SECONDS * 1000,
    directory: getControlPlaneDirectory,
    limits: {
      ratePerSecond: config.RING0_GATEWAY_RATE,
      burst: config.RING0_GATEWAY_BURST,
      maxLongRunning: config.RING0_GATEWAY_MAX_LONG_RUNNING,
      authFailuresPerMinute: config.RING0_GATEWAY_AUTH_FAILURES,
    },
    audit: recordAudit,
    logger,
    // A token of one tenant reaches another within a live sharing grant, and only there.
    sharing: liveSharing(),
  });
}
