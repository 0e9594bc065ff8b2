import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "@/server/logger";
import { type PodApiListener, startPodApiListener } from "./pod-api";

const logger = createLogger({ level: "error" });
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** An "API server" on 127.0.0.1 that answers each line with "api:<line>". */
async function echoServer(): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.on("data", (data) => socket.write(`api:${data}`));
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections };
}

async function listener(upstreamPort: number, admit: (ip: string) => Promise<boolean>, max?: number) {
  const started: PodApiListener = await startPodApiListener({
    owner: "acme",
    host: "127.0.0.1",
    port: 0,
    upstreamPort,
    isTenantPod: admit,
    logger,
    ...(max ? { maxConnections: max } : {}),
  });
  closers.push(() => started.close());
  return started;
}

/** Connects, sends `line`, and resolves with what came back before the connection closed (or 1 s). */
function exchange(port: number, line: string): Promise<{ reply: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let reply = "";
    let settled = false;
    const done = (closed: boolean) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ reply, closed });
    };
    socket.on("connect", () => socket.write(line));
    socket.on("data", (data) => {
      reply += data;
      if (reply.includes(line)) done(false);
    });
    socket.on("close", () => done(true));
    socket.on("error", () => done(true));
    setTimeout(() => done(false), 1_000);
  });
}

function portOf(started: PodApiListener): number {
  return started.port;
}

describe("where a tenant's pods reach its API server", () => {
  it("splices a connection from one of the tenant's pods to its API server, bytes untouched", async () => {
    const api = await echoServer();
    const seen: string[] = [];
    const started = await listener(api.port, async (ip) => {
      seen.push(ip);
      return true;
    });
    const { reply } = await exchange(portOf(started), "GET /api/v1/pods");
    expect(reply).toBe("api:GET /api/v1/pods");
    // The pod is told by its own address (IPv4, as the super cluster lists it).
    expect(seen).toEqual(["127.0.0.1"]);
  });

  it("closes a connection from anything but the tenant's pods before a byte reaches the API server", async () => {
    const api = await echoServer();
    const started = await listener(api.port, async () => false);
    const { reply, closed } = await exchange(portOf(started), "GET /api/v1/secrets");
    expect(closed).toBe(true);
    expect(reply).toBe("");
    expect(api.connections()).toBe(0);
  });

  it("refuses when the super cluster cannot be asked", async () => {
    const api = await echoServer();
    const started = await listener(api.port, async () => {
      throw new Error("super cluster unreachable");
    });
    const { closed } = await exchange(portOf(started), "x");
    expect(closed).toBe(true);
    expect(api.connections()).toBe(0);
  });

  it("holds a bounded number of connections", async () => {
    const api = await echoServer();
    const started = await listener(api.port, async () => true, 2);
    const held = [net.connect(started.port, "127.0.0.1"), net.connect(started.port, "127.0.0.1")];
    await Promise.all(held.map((socket) => new Promise((resolve) => socket.once("connect", resolve))));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const third = await exchange(portOf(started), "third");
    expect(third.closed).toBe(true);
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const later = await exchange(portOf(started), "later");
    expect(later.reply).toBe("api:later");
  });

  it("closes the pod's end when the API server closes its own", async () => {
    const server = net.createServer((socket) => {
      socket.resume();
      socket.end("bye");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const started = await listener((server.address() as net.AddressInfo).port, async () => true);
    const { reply, closed } = await exchange(portOf(started), "hello");
    expect(reply).toBe("bye");
    expect(closed).toBe(true);
  });
});
