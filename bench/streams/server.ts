/**
 * Ring0's stream server in the bench's process, as server/runtime/main.ts wires it (runtime
 * defaults; caps raised to 1000 for the hold): createUpgradeHandler + authenticateStream + the logs
 * and exec endpoints + a registry, on 127.0.0.1. Its streams are opened with a tenant admin's API
 * token (Bearer) and go Ring0 → tenant API server (as the user) → vn-agent → kwok.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { env } from "@/server/env";
import { authenticateStream } from "@/server/streams/authenticate";
import { createExecEndpoint } from "@/server/streams/exec";
import { createLogsEndpoint } from "@/server/streams/logs";
import { createStreamRegistry } from "@/server/streams/registry";
import { createUpgradeHandler, isStreamPath } from "@/server/streams/upgrade";
import { tenantAdminToken } from "../lib/database";
import { type CleanupStack, logger } from "../lib/run";
import { NAMESPACE } from "./sizes";
import type { StreamsWorld } from "./world";

export interface StreamServer {
  /** ws://127.0.0.1:<port> */
  base: string;
  registry: ReturnType<typeof createStreamRegistry>;
  settings: { bufferBytes: number; idleMs: number; maxSessionMs: number };
  /** The runtime's configuration the server was wired with. */
  runtime: ReturnType<typeof env>;
  /** The tenant admin's Bearer token. */
  headers: Record<string, string>;
  logsUrl(pod: string, tail: number): string;
  shellUrl(pod: string): string;
}

export async function startStreamServer(world: StreamsWorld, cleanup: CleanupStack): Promise<StreamServer> {
  const runtime = env();
  const registry = createStreamRegistry({ perUser: 1000, perTenant: 1000 });
  const settings = {
    bufferBytes: runtime.RING0_STREAM_BUFFER_BYTES,
    idleMs: runtime.RING0_STREAM_IDLE_SECONDS * 1000,
    maxSessionMs: runtime.RING0_STREAM_MAX_SECONDS * 1000,
  };
  const handler = createUpgradeHandler({
    allowedOrigins: [],
    authenticate: authenticateStream,
    endpoints: { "/ws/logs": createLogsEndpoint(settings), "/ws/exec": createExecEndpoint(settings) },
    maxPayload: runtime.RING0_WS_MAX_PAYLOAD,
    registry,
    logger,
  });
  const server = http.createServer((_request, response) => response.writeHead(404).end());
  server.on("upgrade", (request, socket, head) => {
    if (isStreamPath(request.url)) handler.handle(request, socket, head);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanup.push("stream server", async () => {
    handler.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { tenant } = world;
  return {
    base,
    registry,
    settings,
    runtime,
    headers: { authorization: `Bearer ${await tenantAdminToken(world.database.db, tenant)}` },
    logsUrl: (pod, tail) =>
      `${base}/ws/logs?source=tenant-pod&tenant=${tenant}&namespace=${NAMESPACE}&pod=${pod}&tailLines=${tail}`,
    shellUrl: (pod) =>
      `${base}/ws/exec?source=tenant-pod&tenant=${tenant}&namespace=${NAMESPACE}&pod=${pod}&shell=sh`,
  };
}
