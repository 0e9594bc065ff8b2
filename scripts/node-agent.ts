/**
 * The local world's node playing a cluster's part for Ring0 installed in it (`./ring0 install`
 * starts it; `npm run cluster:down` stops it): the tenant wall, volumes for the `ring0-local`
 * class, the super cluster's API for Ring0's own pods (scripts/lib/local-install.ts,
 * startNodeDuties), and 127.0.0.1:<port> and :<gateway-port> leading to Ring0's Service (its ports
 * 80 and 443), what browsers and kubectl on this host open.
 *   node --import tsx scripts/node-agent.ts <port> <gateway-port>     ($RING0_STATE_DIR: the world)
 * Its pid is in <state>/in-cluster/node-agent.pid while it serves.
 */
import fs from "node:fs";
import type net from "node:net";
import path from "node:path";
import { localSuperCluster } from "@/server/cluster/local";
import { nodeAgentPidFile } from "@/server/cluster/real-node/plan";
import { createLogger } from "@/server/logger";
import { forwardToService, RING0_RELEASE, startNodeDuties } from "./lib/local-install";

async function main(): Promise<void> {
  const [port, gatewayPort] = process.argv.slice(2).map(Number);
  if (!port || !gatewayPort) {
    process.stderr.write("usage: node --import tsx scripts/node-agent.ts <port> <gateway-port>\n");
    process.exit(2);
  }
  const stateDir = path.resolve(process.env.RING0_STATE_DIR ?? ".ring0");
  const logger = createLogger({ service: "ring0-node-agent" }, "info");
  const conn = localSuperCluster({ stateDir, logger }).connect();
  const duties = await startNodeDuties({ conn, stateDir, logger });
  const forwarders: net.Server[] = [
    await forwardToService(conn, RING0_RELEASE, 80, port),
    await forwardToService(conn, RING0_RELEASE, 443, gatewayPort),
  ];
  const pidFile = nodeAgentPidFile(stateDir);
  fs.writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o600 });
  logger.info("serving", { panel: `127.0.0.1:${port}`, gateway: `127.0.0.1:${gatewayPort}` });
  const stop = () => {
    fs.rmSync(pidFile, { force: true });
    for (const server of forwarders) server.close();
    void duties.stop().finally(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`ring0 node agent: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
