/**
 * The egress proxy's tunnels, with real sockets on loopback and a policy that lets one port
 * through as Ring0's webhook server: a tunnel is over, and counted no longer, once either end
 * closes — however the upstream closes it. (The wall itself is attacked in egress.int.test.ts.)
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "@/server/logger";
import { type EgressProxy, startEgressProxy } from "./egress";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A proxy whose policy lets only 127.0.0.1:`port` through, as Ring0's webhook server. */
async function proxyTo(port: number, maxRing0WebhookConnections = 4): Promise<{ socket: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-egress-"));
  const sockets = { controlplane: path.join(dir, "t.sock"), cluster: path.join(dir, "t.cluster.sock") };
  const proxy: EgressProxy = await startEgressProxy({
    tenant: "t",
    sockets,
    logger: createLogger({}, "error"),
    maxRing0WebhookConnections,
    policy: async (_tenant, _selection, target) =>
      target.host === "127.0.0.1" && target.port === port
        ? { allowed: true, rule: "ring0-webhook", dial: target }
        : { allowed: false, why: "not allowed" },
  });
  cleanups.push(
    () => proxy.close(),
    () => fs.rmSync(dir, { recursive: true, force: true }),
  );
  return { socket: sockets.controlplane };
}

/** A server on 127.0.0.1 whose `onConnection` decides how each connection ends. */
async function server(onConnection: (socket: net.Socket) => void): Promise<number> {
  const listening = net.createServer(onConnection);
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => listening.close());
  return (listening.address() as net.AddressInfo).port;
}

/**
 * One tunnel as an HTTP client's keep-alive connection lives it: CONNECT, read what the upstream
 * sends until it closes its side, then close ours (as Go's transport does with an idle connection
 * its server closed). Resolves with the proxy's answer line and what came through.
 */
function tunnelOnce(socket: string, port: number): Promise<{ status: string; body: string }> {
  return new Promise((resolve, reject) => {
    const client = net.connect(socket, () =>
      client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
    );
    let text = "";
    client.on("data", (chunk) => {
      text += chunk.toString();
    });
    // Another process closes its end a moment later, not on the same turn of the loop.
    client.on("end", () => setTimeout(() => client.end(), 50));
    client.on("close", () => {
      const [status = "", ...rest] = text.split("\r\n\r\n");
      resolve({ status: status.split("\r\n")[0] ?? "", body: rest.join("\r\n\r\n") });
    });
    client.on("error", reject);
  });
}

describe("the egress proxy's tunnels", () => {
  it("counts a tunnel whose upstream closed it no longer, so closed keep-alives never use up the budget", async () => {
    // An upstream that answers and closes, as an HTTP server closing an idle keep-alive connection.
    const port = await server((socket) => socket.end("bye"));
    const { socket } = await proxyTo(port, 4);
    for (let round = 0; round < 12; round++) {
      const answer = await tunnelOnce(socket, port);
      expect(answer.status, `tunnel ${round + 1}`).toBe("HTTP/1.1 200 Connection established");
      expect(answer.body).toBe("bye");
    }
  });

  it("counts a tunnel whose upstream reset it no longer", async () => {
    const port = await server((socket) => socket.resetAndDestroy());
    const { socket } = await proxyTo(port, 4);
    for (let round = 0; round < 12; round++) {
      const answer = await tunnelOnce(socket, port);
      // Reset before or after the proxy saw it connect: either way the tunnel is over.
      expect(answer.status, `tunnel ${round + 1}`).toMatch(/^HTTP\/1\.1 (200|502) /);
    }
  });

  it("counts a tunnel whose upstream reset it mid-stream no longer", async () => {
    // The upstream takes the connection, answers, then resets it with the client's bytes unread.
    const port = await server((socket) => {
      socket.pause();
      socket.write("hello");
      setTimeout(() => socket.resetAndDestroy(), 20);
    });
    const { socket } = await proxyTo(port, 4);
    for (let round = 0; round < 12; round++) {
      const answer = await new Promise<string>((resolve, reject) => {
        const client = net.connect(socket, () =>
          client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
        );
        let text = "";
        client.on("data", (chunk) => {
          if (text === "") client.write("request bytes the upstream never reads");
          text += chunk.toString();
        });
        client.on("end", () => setTimeout(() => client.end(), 50));
        client.on("close", () => resolve(text.split("\r\n")[0] ?? ""));
        client.on("error", reject);
      });
      expect(answer, `tunnel ${round + 1}`).toBe("HTTP/1.1 200 Connection established");
    }
  });

  it("counts a tunnel no longer when its upstream closes while the client is still writing", async () => {
    // The upstream reads nothing for a moment (the client's writes back up meanwhile), then closes
    // its side, reading what is left.
    const port = await server((socket) => {
      socket.pause();
      setTimeout(() => socket.end("bye").resume(), 30);
    });
    const { socket } = await proxyTo(port, 2);
    for (let round = 0; round < 6; round++) {
      const answer = await new Promise<string>((resolve) => {
        const client = net.connect(socket, () =>
          client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
        );
        let text = "";
        client.once("data", (chunk) => {
          text = chunk.toString();
          client.write(Buffer.alloc(4 << 20));
        });
        // Its writes can never drain now: it gives up, as a client does on a dead connection.
        client.on("end", () => setTimeout(() => client.destroy(), 50));
        client.on("close", () => resolve(text.split("\r\n")[0] ?? ""));
        // Its pending writes may meet a closed tunnel: that is the point, not a failure.
        client.on("error", () => client.destroy());
      });
      expect(answer, `tunnel ${round + 1}`).toBe("HTTP/1.1 200 Connection established");
    }
  });

  it("holds the budget while tunnels are open, and frees it as they close", async () => {
    const held: net.Socket[] = [];
    let holding = true;
    const port = await server((socket) => (holding ? held.push(socket) : socket.end("bye")));
    const { socket } = await proxyTo(port, 2);
    const open = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<net.Socket>((resolve, reject) => {
            const client = net.connect(socket, () =>
              client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
            );
            client.once("data", () => resolve(client));
            client.on("error", reject);
          }),
      ),
    );
    expect((await tunnelOnce(socket, port)).status).toMatch(/^HTTP\/1\.1 403 /);
    // The upstream closes one: the tenant's end is closed too, and the budget has room again.
    const closed = new Promise<void>((resolve) => open[0]?.once("close", () => resolve()));
    held[0]?.end();
    open[0]?.on("end", () => open[0]?.end());
    await closed;
    holding = false;
    const again = await tunnelOnce(socket, port);
    expect(again.status).toMatch(/^HTTP\/1\.1 200 /);
    for (const client of open) client.destroy();
  });
});
