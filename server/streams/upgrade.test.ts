import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createCredentialRechecks } from "@/server/auth/rechecks";
import type { SessionUser } from "@/server/core/roles";
import { createLogger } from "@/server/logger";
import { pingEndpoint } from "./ping";
import { createUpgradeHandler, isStreamPath } from "./upgrade";

const origin = "http://localhost:3000";
const alice: SessionUser = {
  id: "u1",
  subject: "acme:acme-admin",
  name: "Alice",
  email: null,
  tenant: "acme",
  role: "tenant-admin",
};

let server: http.Server;
let url: string;
let handler: ReturnType<typeof createUpgradeHandler>;
let otherUpgrades = 0;
/** Who the valid session cookie signs in now (tests change it to end open streams). */
let aliceNow: SessionUser | null = alice;
const rechecks = createCredentialRechecks({ logger: createLogger({}, "error") });

beforeAll(async () => {
  handler = createUpgradeHandler({
    allowedOrigins: [origin],
    // Stands in for the session-cookie check (covered in session.test.ts): one valid cookie.
    authenticate: async (headers) =>
      headers.cookie === "session=valid"
        ? {
            user: alice,
            method: "session",
            confinedTo: null,
            credential: { key: "session:valid", current: async () => aliceNow },
          }
        : null,
    endpoints: {
      "/ws/ping": pingEndpoint,
      "/ws/admins-only": {
        authorize: ({ user }) => (user.role === "operator" ? null : "Only operators may open this stream."),
        open: (socket) => socket.close(),
      },
    },
    maxPayload: 1024,
    rechecks,
    logger: createLogger({}, "error"),
  });
  server = http.createServer();
  server.on("upgrade", (request, socket, head) => {
    if (isStreamPath(request.url)) handler.handle(request, socket, head);
    else {
      otherUpgrades += 1;
      socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  handler.close();
  rechecks.close();
  await new Promise((resolve) => server.close(resolve));
});

function connect(path: string, headers: Record<string, string>) {
  return new WebSocket(`${url}${path}`, { headers });
}

function refusal(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(path, headers);
    socket.on("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    socket.on("open", () => reject(new Error("upgrade was accepted")));
    socket.on("error", () => {});
  });
}

function nextMessage(socket: WebSocket): Promise<Record<string, unknown>> {
  return new Promise((resolve) => socket.once("message", (data) => resolve(JSON.parse(data.toString()))));
}

function closed(socket: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) =>
    socket.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
}

describe("WebSocket upgrades under /ws/", () => {
  it("refuses a foreign or missing Origin with 403", async () => {
    expect(
      await refusal("/ws/ping", { Origin: "https://evil.example", Cookie: "session=valid" }),
    ).toMatchObject({
      status: 403,
      body: expect.stringContaining("Origin not allowed"),
    });
    expect((await refusal("/ws/ping", { Cookie: "session=valid" })).status).toBe(403);
  });

  it("tells a browser (cookie) about a missing or invalid session with an error frame and close 4401", async () => {
    const attempts: Array<Record<string, string>> = [
      { Origin: origin },
      { Origin: origin, Cookie: "session=forged" },
    ];
    for (const headers of attempts) {
      const socket = connect("/ws/ping", headers);
      const frame = nextMessage(socket);
      expect(await frame).toEqual({ type: "error", status: 401, message: "Sign in to open this stream." });
      expect((await closed(socket)).code).toBe(4401);
    }
  });

  it("answers a program (bearer token) with plain HTTP statuses it can read", async () => {
    expect((await refusal("/ws/ping", { Authorization: "Bearer r0_unknown" })).status).toBe(401);
    expect(
      (await refusal("/ws/ping", { Authorization: "Bearer r0_unknown", Origin: "https://evil.example" }))
        .status,
    ).toBe(403);
  });

  it("closes with 4404 for unknown streams and 4403 when the stream's own check refuses", async () => {
    const unknown = connect("/ws/nope", { Origin: origin, Cookie: "session=valid" });
    expect(await nextMessage(unknown)).toMatchObject({ type: "error", status: 404 });
    expect((await closed(unknown)).code).toBe(4404);
    const refused = connect("/ws/admins-only", { Origin: origin, Cookie: "session=valid" });
    expect(await nextMessage(refused)).toMatchObject({
      type: "error",
      status: 403,
      message: expect.stringContaining("Only operators"),
    });
    expect((await closed(refused)).code).toBe(4403);
  });

  it("greets with the session's identity and answers pings", async () => {
    const socket = connect("/ws/ping", { Origin: origin, Cookie: "session=valid" });
    expect(await nextMessage(socket)).toEqual({
      type: "hello",
      user: { name: "Alice", tenant: "acme", role: "tenant-admin" },
    });
    socket.send(JSON.stringify({ type: "ping", id: "42" }));
    expect(await nextMessage(socket)).toMatchObject({ type: "pong", id: "42" });
    socket.close();
  });

  it("closes on a malformed frame (1007) and an oversized one (1009), each stream alone", async () => {
    const healthy = connect("/ws/ping", { Origin: origin, Cookie: "session=valid" });
    await nextMessage(healthy);

    const malformed = connect("/ws/ping", { Origin: origin, Cookie: "session=valid" });
    await nextMessage(malformed);
    malformed.send("not json");
    expect(await closed(malformed)).toMatchObject({ code: 1007 });

    const oversized = connect("/ws/ping", { Origin: origin, Cookie: "session=valid" });
    await nextMessage(oversized);
    oversized.send(JSON.stringify({ type: "ping", id: "x".repeat(2048) }));
    expect((await closed(oversized)).code).toBe(1009);

    healthy.send(JSON.stringify({ type: "ping", id: "still-here" }));
    expect(await nextMessage(healthy)).toMatchObject({ type: "pong", id: "still-here" });
    healthy.close();
  });

  it("ends an open stream once its session ends (4401) or its role changes (4403), at the next recheck", async () => {
    try {
      const downgraded = connect("/ws/ping", { Origin: origin, Cookie: "session=valid" });
      await nextMessage(downgraded);
      aliceNow = { ...alice, role: "tenant-viewer" };
      const frame = nextMessage(downgraded);
      await rechecks.round();
      expect(await frame).toMatchObject({
        type: "error",
        status: 403,
        message: expect.stringContaining("role"),
      });
      expect((await closed(downgraded)).code).toBe(4403);

      aliceNow = alice;
      const signedOut = connect("/ws/ping", { Origin: origin, Cookie: "session=valid" });
      await nextMessage(signedOut);
      aliceNow = null;
      const ended = nextMessage(signedOut);
      await rechecks.round();
      expect(await ended).toMatchObject({ type: "error", status: 401 });
      expect((await closed(signedOut)).code).toBe(4401);
    } finally {
      aliceNow = alice;
    }
  });

  it("leaves other upgrades to their owner", async () => {
    const before = otherUpgrades;
    const socket = connect("/_next/webpack-hmr", { Origin: origin });
    await new Promise((resolve) => socket.on("error", resolve));
    expect(otherUpgrades).toBe(before + 1);
  });
});
