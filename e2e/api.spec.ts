import NodeWebSocket from "ws";
import { expect, test } from "./fixtures";
import { e2eOrigin, e2ePort } from "./ports";

const wsUrl = `ws://localhost:${e2ePort}/ws/ping`;
const origin = e2eOrigin;

/** Opens a WebSocket from Node (so the test controls Origin and cookies) and reports what happened. */
function openSocket(headers: Record<string, string>): Promise<{ status: number; hello?: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = new NodeWebSocket(wsUrl, { headers });
    socket.on("unexpected-response", (_request, response) => {
      resolve({ status: response.statusCode ?? 0 });
      socket.terminate();
    });
    socket.on("message", (data) => {
      resolve({ status: 101, hello: JSON.parse(String(data)) });
      socket.close();
    });
    socket.on("error", reject);
  });
}

test.describe("HTTP and WebSocket endpoints", () => {
  test("health is public and readiness reports each dependency", async ({ request }) => {
    const health = await request.get("/api/health");
    expect(await health.json()).toEqual({ status: "ok" });
    const ready = await request.get("/api/ready");
    expect(ready.status()).toBe(200);
    const body = await ready.json();
    expect(body.status).toBe("ready");
    expect(body.dependencies.map((dependency: { name: string }) => dependency.name)).toEqual([
      "database",
      "iam",
      "super-cluster",
      "tenants",
    ]);
    expect(body.starting).toEqual([]);
  });

  test("the WebSocket refuses a foreign Origin and a missing session", async ({ loginAs }) => {
    const page = await loginAs("tenant-member", "acme");
    const cookies = await page.context().cookies(origin);
    const cookie = cookies.map((entry) => `${entry.name}=${entry.value}`).join("; ");

    expect((await openSocket({ Origin: "http://evil.example", Cookie: cookie })).status).toBe(403);
    expect((await openSocket({ Cookie: cookie })).status).toBe(403);
    // A browser cannot read a refused upgrade's status: from an allowed Origin it gets the refusal
    // as an error frame (then a 4401 close) instead.
    const signedOut = {
      status: 101,
      hello: { type: "error", status: 401, message: "Sign in to open this stream." },
    };
    expect(await openSocket({ Origin: origin })).toEqual(signedOut);
    expect(await openSocket({ Origin: origin, Cookie: "next-auth.session-token=forged" })).toEqual(signedOut);
    const accepted = await openSocket({ Origin: origin, Cookie: cookie });
    expect(accepted).toMatchObject({ status: 101, hello: { type: "hello", user: { tenant: "acme" } } });
  });

  test("the browser's own WebSocket is accepted and answers pings", async ({ loginAs }) => {
    const page = await loginAs("tenant-admin", "acme");
    await page.goto("/t/acme");
    const reply = await page.evaluate(
      (url) =>
        new Promise<unknown[]>((resolve, reject) => {
          const frames: unknown[] = [];
          // The browser's own WebSocket: sends the page's Origin and cookies like any user.
          const socket = new globalThis.WebSocket(url);
          socket.onmessage = (event) => {
            frames.push(JSON.parse(String(event.data)));
            if (frames.length === 1) socket.send(JSON.stringify({ type: "ping", id: "p1" }));
            else {
              socket.close();
              resolve(frames);
            }
          };
          socket.onerror = () => reject(new Error("websocket failed"));
        }),
      wsUrl,
    );
    expect(reply).toMatchObject([
      { type: "hello", user: { role: "tenant-admin" } },
      { type: "pong", id: "p1" },
    ]);
  });
});
