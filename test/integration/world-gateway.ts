/**
 * A kube gateway in front of a data-plane world's tenants (test/integration/data-plane-world.ts),
 * as the runtime wires it: API tokens verified against the world's database, the world's control
 * plane directory, its own HTTPS listener, and a kubeconfig per tenant issued to that tenant's
 * signed-in admin by Ring0's kubeconfig service (files in `home`, mode 0600).
 */

import fs from "node:fs";
import path from "node:path";
import type { SessionUser } from "@/server/core/roles";
import { createKubeGateway } from "@/server/gateway/gateway";
import { startGatewayListener } from "@/server/gateway/listener";
import { ensureGatewayTls } from "@/server/gateway/tls";
import { createKubeconfigService } from "@/server/kubeconfigs/service";
import type { Logger } from "@/server/logger";
import { createTokenService } from "@/server/tokens/service";
import type { DataPlaneWorld } from "./data-plane-world";

export interface WorldGateway {
  /** The gateway's HTTPS port on 127.0.0.1. */
  port: number;
  /** Each tenant's kubeconfig file, its admin's, through the gateway. */
  kubeconfigs: Record<string, string>;
  close(): Promise<void>;
}

export async function startWorldGateway(
  world: DataPlaneWorld,
  tenants: string[],
  options: { home: string; logger: Logger },
): Promise<WorldGateway> {
  const { home, logger } = options;
  const tokens = createTokenService({ db: world.db });
  const gateway = createKubeGateway({
    authenticate: (plaintext) => tokens.verifyToken(plaintext),
    directory: () => world.directory,
    limits: { ratePerSecond: 1000, burst: 1000, maxLongRunning: 20 },
    audit: async () => {},
    logger,
  });
  const tls = await ensureGatewayTls({ stateDir: home });
  const listener = await startGatewayListener({ gateway, tls, port: 0, logger });
  const service = createKubeconfigService({
    db: world.db,
    gateway: { gatewayUrl: `https://localhost:${listener.port}`, caPem: tls.caPem as string },
  });
  const kubeconfigs: Record<string, string> = {};
  for (const tenant of tenants) {
    const issued = await service.issueKubeconfig({
      user: world.users[tenant] as SessionUser,
      tenant,
      expiresInDays: 1,
    });
    const file = path.join(home, `${tenant}.kubeconfig`);
    fs.writeFileSync(file, issued.kubeconfig, { mode: 0o600 });
    kubeconfigs[tenant] = file;
  }
  return {
    port: listener.port,
    kubeconfigs,
    async close() {
      await listener.close();
      gateway.close();
    },
  };
}
