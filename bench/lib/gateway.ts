/**
 * The kube gateway as a bench reaches it: served over HTTPS in this process (the runtime's listener
 * and Ring0's own gateway CA), and the kubeconfig Ring0 hands out for it.
 */
import fs from "node:fs";
import { recordAudit } from "@/server/audit/service";
import type { PrismaClient } from "@/server/db/client";
import { createKubeGateway, type GatewaySharing } from "@/server/gateway/gateway";
import { startGatewayListener } from "@/server/gateway/listener";
import { ensureGatewayTls } from "@/server/gateway/tls";
import { cachingVerifier } from "@/server/gateway/token-cache";
import type { ControlPlaneDirectory } from "@/server/tenants/control-planes";
import { createTokenService } from "@/server/tokens/service";
import { logger } from "./run";

export interface BenchGateway {
  /** https://127.0.0.1:<port> */
  url: string;
  /** PEM CA of the listener's certificate (Ring0's own gateway CA). */
  ca: string;
  close(): Promise<void>;
}

/**
 * The kube gateway as the runtime wires it (real token verification against PostgreSQL, cached
 * for 2 s like the runtime's, audit
 * through recordAudit) behind its HTTPS listener on 127.0.0.1. Limits are set high enough that
 * the bench never meets them: it measures forwarding, not the rate limiter. `sharing`, when given,
 * lets tokens of other tenants in within its grants (without it, a token reaches its own tenant only).
 */
export async function startBenchGateway(
  dir: string,
  db: PrismaClient,
  directory: ControlPlaneDirectory,
  options: { sharing?: GatewaySharing } = {},
): Promise<BenchGateway> {
  const tokens = createTokenService({ db });
  const gateway = createKubeGateway({
    // As the runtime does: successes reused for 2 s (server/gateway/token-cache.ts).
    authenticate: cachingVerifier((plaintext) => tokens.verifyToken(plaintext)),
    directory: () => directory,
    limits: { ratePerSecond: 100_000, burst: 100_000, maxLongRunning: 1_000 },
    audit: recordAudit,
    logger,
    sharing: options.sharing,
  });
  const tls = await ensureGatewayTls({ stateDir: dir });
  const listener = await startGatewayListener({ gateway, tls, port: 0, logger });
  return {
    url: `https://127.0.0.1:${listener.port}`,
    ca: tls.caPem as string,
    async close() {
      await listener.close();
      gateway.close();
    },
  };
}

/** A kubeconfig as Ring0 hands one out: the gateway's tenant URL, its CA, a bearer token. */
export function writeTokenKubeconfig(file: string, server: string, ca: string, token: string): string {
  fs.writeFileSync(
    file,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{name: ring0, cluster: {server: '${server}', certificate-authority-data: ${Buffer.from(ca).toString("base64")}}}]`,
      `users: [{name: me, user: {token: '${token}'}}]`,
      "contexts: [{name: ring0, context: {cluster: ring0, user: me}}]",
      "current-context: ring0",
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  return file;
}
