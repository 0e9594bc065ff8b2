import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayListener, refuseGatewayOverPlainHttp, startGatewayListener } from "./listener";
import { httpsGet } from "./test-https";
import { ensureGatewayTls, type GatewayTls } from "./tls";

let dir = "";
let tls: GatewayTls;
let listener: GatewayListener;
const seen: string[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-gateway-listener-"));
  tls = await ensureGatewayTls({ stateDir: dir });
  listener = await startGatewayListener({
    gateway: {
      handleRequest(request, response) {
        seen.push(request.url ?? "");
        response.writeHead(200, { "content-type": "text/plain" }).end("gateway");
      },
      handleUpgrade(_request, socket) {
        socket.destroy();
      },
    },
    tls,
    port: 0,
  });
});

afterAll(async () => {
  await listener?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function get(url: string, hostname = "localhost"): Promise<{ status: number; body: string }> {
  return httpsGet({ hostname, port: listener.port, path: url }, tls.caPem as string);
}

describe("startGatewayListener", () => {
  it("serves gateway paths over TLS verified by Ring0's CA, for localhost and 127.0.0.1", async () => {
    expect(await get("/k8s/tenants/acme/api")).toEqual({ status: 200, body: "gateway" });
    expect(await get("/k8s/tenants/acme/version", "127.0.0.1")).toEqual({ status: 200, body: "gateway" });
    expect(seen).toEqual(["/k8s/tenants/acme/api", "/k8s/tenants/acme/version"]);
  });

  it("gives the gateway Kubernetes API paths without the tenant's prefix (its token names the tenant)", async () => {
    seen.length = 0;
    for (const path of ["/api/v1/pods", "/apis", "/version", "/openapi/v2"]) {
      expect(await get(path)).toEqual({ status: 200, body: "gateway" });
    }
    expect(seen).toEqual(["/api/v1/pods", "/apis", "/version", "/openapi/v2"]);
  });

  it("answers anything else with a 404 Status", async () => {
    for (const path of ["/", "/trpc/me", "/apiserver", "/metrics", "/k8"]) {
      const answer = await get(path);
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.body)).toMatchObject({ kind: "Status", code: 404, reason: "NotFound" });
    }
  });

  it("rejects with EADDRINUSE when the port is taken", async () => {
    await expect(
      startGatewayListener({
        gateway: { handleRequest() {}, handleUpgrade() {} },
        tls,
        port: listener.port,
      }),
    ).rejects.toMatchObject({ code: "EADDRINUSE" });
  });
});

describe("refuseGatewayOverPlainHttp", () => {
  it("refuses /k8s/ on the portal's plain HTTP port with 421 and the TLS URL, requests and upgrades alike", async () => {
    const plain = refuseGatewayOverPlainHttp("https://localhost:3443");
    const server = http.createServer((request, response) => plain.handleRequest(request, response));
    server.on("upgrade", (request, socket, head) => plain.handleUpgrade(request, socket, head));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const ask = (headers: Record<string, string>) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const outgoing = http.request({
            hostname: "127.0.0.1",
            port,
            path: "/k8s/tenants/acme/api/v1/pods?watch=1",
            headers: { authorization: "Bearer r0_whatever", ...headers },
          });
          outgoing.on("upgrade", () => reject(new Error("unexpected upgrade")));
          outgoing.on("response", (response) => {
            let body = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => {
              body += chunk;
            });
            response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
          });
          outgoing.on("error", reject);
          outgoing.end();
        });
      const variants: Array<Record<string, string>> = [{}, { connection: "Upgrade", upgrade: "websocket" }];
      for (const headers of variants) {
        const answer = await ask(headers);
        expect(answer.status).toBe(421);
        expect(JSON.parse(answer.body)).toMatchObject({
          kind: "Status",
          code: 421,
          message:
            "The kube gateway is served over TLS only: use https://localhost:3443/k8s/tenants/acme/api/v1/pods (this port serves the portal).",
        });
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
