/**
 * Browser streams (/ws/logs, /ws/exec) on real parts: the run's super cluster with kwok serving
 * simulated containers, vn-agents, two tenants with their own control planes (local provisioner),
 * the syncer, PostgreSQL for sessions, tokens and audit. A tenant pod's log and shell go
 * Ring0 → tenant apiserver (as the user) → vn-agent → kwok, exactly the path the browser takes.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import WebSocket from "ws";
import { localClusterLogFile } from "@/server/cluster/local";
import { SIMULATED_POD_LABEL } from "@/server/cluster/simulated-pods";
import type { SessionUser } from "@/server/core/roles";
import { closeCodes, type LogLine, type ServerFrame } from "@/server/core/stream-protocol";
import { eventually } from "@/server/k8s/test-cluster";
import { createLogger } from "@/server/logger";
import { type Obj, readOrUndefined, ref } from "@/server/syncer/test-world";
import { createTokenService } from "@/server/tokens/service";
import { createUserRepository } from "@/server/users/repository";
import { type DataPlaneWorld, startDataPlaneWorld } from "@/test/integration/data-plane-world";
import { authenticateStream } from "./authenticate";
import { createExecEndpoint } from "./exec";
import { createLogsEndpoint } from "./logs";
import { kwokLogProvider, vnAgentLogProvider } from "./node-logs";
import { nodeShellLabel, nodeShellNamespace } from "./node-shell";
import { createStreamRegistry } from "./registry";
import { registerNodeLogProvider } from "./sources";
import { createUpgradeHandler, isStreamPath } from "./upgrade";

const logger = createLogger({ service: "streams-it" }, "error");
const suffix = Math.random().toString(36).slice(2, 7);
const acme = `acme-${suffix}`;
const globex = `globex-${suffix}`;
const origin = "http://localhost:3000";
const bufferBytes = 256 * 1024;
const operatorKey = Math.random().toString(36);
let operator: SessionUser;

let world: DataPlaneWorld;
let server: http.Server;
let handler: ReturnType<typeof createUpgradeHandler>;
let base = "";
let logFile = "";

function criLine(text: string, at = new Date()): string {
  return `${at.toISOString().replace("Z", "000000Z")} stdout F ${text}\n`;
}

interface Opened {
  socket: WebSocket;
  frames: ServerFrame[];
  binary: Buffer[];
  closed: Promise<{ code: number; reason: string }>;
  lines(): LogLine[];
  output(): string;
}

function open(path: string, headers: Record<string, string>): Opened {
  const socket = new WebSocket(`${base}${path}`, { headers });
  const frames: ServerFrame[] = [];
  const binary: Buffer[] = [];
  socket.on("message", (data: Buffer, isBinary) => {
    if (isBinary) binary.push(data);
    else frames.push(JSON.parse(data.toString()) as ServerFrame);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() }));
    socket.on("error", () => {});
  });
  return {
    socket,
    frames,
    binary,
    closed,
    lines: () => frames.flatMap((frame) => (frame.type === "lines" ? frame.lines : [])),
    output: () =>
      Buffer.concat(
        binary.filter((frame) => frame[0] === 1 || frame[0] === 2).map((frame) => frame.subarray(1)),
      ).toString("utf8"),
  };
}

/** The HTTP status of a refused upgrade. */
function refusedWith(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${base}${path}`, { headers });
    socket.on("unexpected-response", (_request, response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
      );
    });
    socket.on("open", () => {
      socket.close();
      reject(new Error(`the upgrade of ${path} was accepted`));
    });
    socket.on("error", () => {});
  });
}

const as = (tenant: string) => ({ authorization: `Bearer ${world.tokens[tenant]}`, origin });
const podLogs = (tenant: string, extra = "") =>
  `/ws/logs?source=tenant-pod&tenant=${tenant}&namespace=default&pod=web${extra}`;
const podShell = (tenant: string, extra = "") =>
  `/ws/exec?source=tenant-pod&tenant=${tenant}&namespace=default&pod=web&shell=sh${extra}`;

beforeAll(async () => {
  world = await startDataPlaneWorld({ tenants: [acme, globex], logger, name: "streams" });
  const identity = {
    subject: `system:operator-${suffix}`,
    tenant: "system",
    name: "Olivia Operator",
    role: "operator" as const,
    email: null,
  };
  operator = {
    ...identity,
    id: (await createUserRepository(world.db).recordSignIn(identity, new Date())).id,
  };
  const settings = {
    bufferBytes,
    idleMs: 60_000,
    maxSessionMs: 600_000,
    superPodLabels: { [SIMULATED_POD_LABEL]: "true" },
  };
  handler = createUpgradeHandler({
    allowedOrigins: [origin],
    // Operators sign in through the IAM (the e2e suite covers that); here one header stands in for
    // an operator's session so the node sources can be exercised. Everyone else: the real check.
    authenticate: async (headers) =>
      headers["x-test-operator"] === operatorKey
        ? {
            user: operator,
            method: "session",
            confinedTo: null,
            credential: { key: "session:operator", current: async () => operator },
          }
        : authenticateStream(headers),
    endpoints: { "/ws/logs": createLogsEndpoint(settings), "/ws/exec": createExecEndpoint(settings) },
    maxPayload: 64 * 1024,
    recheckMs: 300,
    registry: createStreamRegistry({ perUser: 6, perTenant: 50 }),
    logger,
  });
  server = http.createServer((_request, response) => response.writeHead(404).end());
  server.on("upgrade", (request, socket, head) => {
    if (isStreamPath(request.url)) handler.handle(request, socket, head);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  registerNodeLogProvider("vn-agent", vnAgentLogProvider);
  registerNodeLogProvider(
    "kwok",
    kwokLogProvider(localClusterLogFile(inject("superStateDir"), "kwok-controller")),
  );

  // A pod in acme, Running below on a simulated node (which serves its simulated log and shell).
  logFile = await world.runningPod(acme, "web");
}, 300_000);

afterAll(async () => {
  registerNodeLogProvider("vn-agent", null);
  registerNodeLogProvider("kwok", null);
  handler?.close();
  await new Promise((resolve) => server?.close(resolve));
  await world?.stop();
}, 180_000);

describe("browser streams", { timeout: 120_000 }, () => {
  it("follows a tenant pod's log through the tenant control plane: old lines, then new ones as they come", async () => {
    const stream = open(podLogs(acme, "&tailLines=100"), as(acme));
    await eventually(async () =>
      stream.lines().some((line) => line.text.includes("simulated pod")) ? true : undefined,
    );
    const marker = `ring0-streams-${Date.now()}`;
    fs.appendFileSync(logFile, criLine(`${marker} one`) + criLine(`${marker} two`));
    const arrived = await eventually(async () => {
      const mine = stream.lines().filter((line) => line.text.startsWith(marker));
      return mine.length === 2 ? mine : undefined;
    });
    expect(arrived.map((line) => line.text)).toEqual([`${marker} one`, `${marker} two`]);
    expect(arrived[0]?.ts).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(stream.frames.find((frame) => frame.type === "status")).toMatchObject({ state: "following" });
    stream.socket.close();
  });

  it("runs a shell in the tenant pod: output, resize, exit code, and a session record with bytes", async () => {
    const shell = open(podShell(acme, "&cols=100&rows=30"), as(acme));
    const started = await eventually(async () => shell.frames.find((frame) => frame.type === "started"));
    expect(started).toMatchObject({ type: "started", shell: "sh" });
    shell.socket.send(JSON.stringify({ type: "resize", cols: 120, rows: 40 }));
    shell.socket.send(Buffer.from("echo ring0-$((6*7))\n"), { binary: true });
    await eventually(async () => (/ring0-42/.test(shell.output()) ? true : undefined));
    shell.socket.send(Buffer.from("stty size\n"), { binary: true });
    await eventually(async () => (/40 120/.test(shell.output()) ? true : undefined));
    shell.socket.send(Buffer.from("exit 3\n"), { binary: true });
    const exit = await eventually(async () => shell.frames.find((frame) => frame.type === "exit"));
    expect(exit).toMatchObject({ type: "exit", code: 3 });
    expect((await shell.closed).code).toBe(1000);

    const sessionId = started.type === "started" ? started.sessionId : "";
    const row = await eventually(async () => {
      const found = await world.db.execSession.findUnique({ where: { id: sessionId } });
      return found?.endedAt ? found : undefined;
    });
    expect(row).toMatchObject({
      tenant: acme,
      namespace: "default",
      pod: "web",
      exitCode: 3,
      source: "tenant-pod",
    });
    expect(Number(row.bytesIn)).toBeGreaterThan(20);
    expect(Number(row.bytesOut)).toBeGreaterThan(10);
    expect(row.userId).toBe(world.users[acme]?.id);
    const audit = await world.db.auditEvent.findFirst({ where: { action: "pod.exec", tenant: acme } });
    expect(audit?.detail).toMatchObject({ sessionId });
  });

  it("shows an operator the vn-agent's log of the pod's node (the shell just went through it) and kwok's", async () => {
    const conn = world.admin[acme];
    if (!conn) throw new Error("no acme control plane");
    const pod = await readOrUndefined<Obj>(conn, ref("Pod", "web", "default"));
    const node = pod?.spec?.nodeName ?? "";
    const agentLog = open(`/ws/logs?source=vn-agent&node=${node}&tailLines=500`, {
      origin,
      "x-test-operator": operatorKey,
    });
    const lines = await eventually(async () => {
      const got = agentLog.lines();
      return got.some((line) => line.text.includes("request") && line.text.includes(acme)) ? got : undefined;
    });
    expect(lines.find((line) => line.text.includes("request"))?.text).toMatch(/INFO request .*tenant=acme-/);
    agentLog.socket.close();

    const kwokLog = open(`/ws/logs?source=kwok&node=${node}&tailLines=50&follow=0`, {
      origin,
      "x-test-operator": operatorKey,
    });
    expect((await kwokLog.closed).code).toBe(1000);
    expect(kwokLog.lines().length).toBeGreaterThan(0);
    expect(
      kwokLog.lines().every((line) => line.text.includes(`node=${node}`) || line.text.includes(node)),
    ).toBe(true);
  });

  it("gives an operator a node shell: a pod pinned to the node, audited, and deleted when the shell ends", async () => {
    const conn = world.admin[acme];
    if (!conn) throw new Error("no acme control plane");
    const node = (await readOrUndefined<Obj>(conn, ref("Pod", "web", "default")))?.spec?.nodeName ?? "";
    const shell = open(`/ws/exec?source=node-shell&node=${node}&shell=sh`, {
      origin,
      "x-test-operator": operatorKey,
    });
    const started = await eventually(async () => {
      const error = shell.frames.find((frame) => frame.type === "error");
      if (error) throw new Error(`the node shell was refused: ${JSON.stringify(error)}`);
      return shell.frames.find((frame) => frame.type === "started");
    }, 90_000);
    const sessionId = started.type === "started" ? started.sessionId : "";
    const row = await world.db.execSession.findUniqueOrThrow({ where: { id: sessionId } });
    expect(row).toMatchObject({ source: "node-shell", namespace: nodeShellNamespace, tenant: null });
    const below = await readOrUndefined<Obj>(world.superCluster, ref("Pod", row.pod, nodeShellNamespace));
    expect(below?.spec?.nodeName).toBe(node);
    expect(below?.metadata.labels?.[nodeShellLabel]).toBe("true");

    shell.socket.send(Buffer.from("echo node-$((6*7))\n"), { binary: true });
    await eventually(async () => (/node-42/.test(shell.output()) ? true : undefined));
    shell.socket.close();
    await shell.closed;
    await eventually(async () =>
      (await readOrUndefined(world.superCluster, ref("Pod", row.pod, nodeShellNamespace))) ? undefined : true,
    );
    const audit = await world.db.auditEvent.findFirst({ where: { action: "node.shell", target: node } });
    expect(audit?.detail).toMatchObject({ sessionId });
    expect((await refusedWith(`/ws/exec?source=node-shell&node=${node}`, as(acme))).status).toBe(403);
  });

  it("refuses a foreign Origin (403), no credentials (401) and a revoked token (401)", async () => {
    expect((await refusedWith(podLogs(acme), { ...as(acme), origin: "https://evil.example" })).status).toBe(
      403,
    );
    // A browser (no bearer token) cannot read an HTTP status: it gets an error frame and 4401.
    const anonymous = open(podLogs(acme), { origin });
    expect((await anonymous.closed).code).toBe(closeCodes.sessionEnded);
    expect(anonymous.frames).toEqual([
      { type: "error", status: 401, message: "Sign in to open this stream." },
    ]);
    const tokens = createTokenService({ db: world.db });
    const user = world.users[acme];
    if (!user) throw new Error("no acme admin");
    const issued = await tokens.issueToken({ user, tenant: acme, name: "revoked", expiresInDays: 1 });
    await tokens.revokeToken(issued.token.id, user);
    expect(
      (await refusedWith(podLogs(acme), { authorization: `Bearer ${issued.plaintext}`, origin })).status,
    ).toBe(401);
  });

  it("closes an open stream within seconds when its token is revoked", async () => {
    const tokens = createTokenService({ db: world.db });
    const user = world.users[acme];
    if (!user) throw new Error("no acme admin");
    const issued = await tokens.issueToken({ user, tenant: acme, name: "soon revoked", expiresInDays: 1 });
    const stream = open(podLogs(acme), { authorization: `Bearer ${issued.plaintext}`, origin });
    await eventually(async () => (stream.lines().length > 0 ? true : undefined));
    await tokens.revokeToken(issued.token.id, user);
    const closed = await stream.closed;
    expect(closed.code).toBe(closeCodes.sessionEnded);
    expect(stream.frames.find((frame) => frame.type === "error")).toMatchObject({ status: 401 });
  });

  it("answers another tenant's pod like a tenant that does not exist, and keeps nodes to operators", async () => {
    const foreign = await refusedWith(podLogs(acme), as(globex));
    expect(foreign.status).toBe(404);
    expect(foreign.body).toContain(`Tenant \\"${acme}\\" was not found`);
    expect((await refusedWith(podShell(acme), as(globex))).status).toBe(404);
    const node = await refusedWith("/ws/logs?source=vn-agent&node=ring0-node-1", as(acme));
    expect(node.status).toBe(403);
    expect(node.body).toContain("Only operators");
    const superPod = await refusedWith("/ws/exec?source=super-pod&namespace=default&pod=web", as(acme));
    expect(superPod.status).toBe(403);
  });

  it("refuses a bad query with what to fix (400)", async () => {
    const bad = await refusedWith("/ws/logs?source=tenant-pod&tenant=Not_A_Name&pod=web", as(acme));
    expect(bad.status).toBe(400);
    expect(bad.body).toContain("tenant");
    expect(bad.body).toContain("namespace: namespace is required");
    const tail = await refusedWith(podLogs(acme, "&tailLines=-5"), as(acme));
    expect(tail.body).toContain("tailLines must be 0 or more");
  });

  it("reports an unknown container with the control plane's message, other streams unaffected", async () => {
    const healthy = open(podLogs(acme), as(acme));
    await eventually(async () => (healthy.lines().length > 0 ? true : undefined));
    const unknown = open(podLogs(acme, "&container=nope"), as(acme));
    const closed = await unknown.closed;
    expect(closed.code).toBe(closeCodes.badRequest);
    const error = unknown.frames.find((frame) => frame.type === "error");
    expect(error?.type === "error" && error.message).toContain("nope");

    const marker = `still-here-${Date.now()}`;
    fs.appendFileSync(logFile, criLine(marker));
    await eventually(async () => (healthy.lines().some((line) => line.text === marker) ? true : undefined));
    healthy.socket.close();
  });

  it("answers a malformed frame with a message and keeps the stream; an oversized frame closes only its own stream", async () => {
    const stream = open(podLogs(acme), as(acme));
    const other = open(podLogs(acme), as(acme));
    await eventually(async () => (stream.lines().length > 0 && other.lines().length > 0 ? true : undefined));
    stream.socket.send("{not json");
    const error = await eventually(async () => stream.frames.find((frame) => frame.type === "error"));
    expect(error).toMatchObject({ status: 400 });
    const marker = `after-malformed-${Date.now()}`;
    fs.appendFileSync(logFile, criLine(marker));
    await eventually(async () => (stream.lines().some((line) => line.text === marker) ? true : undefined));

    stream.socket.send("x".repeat(128 * 1024));
    expect((await stream.closed).code).toBe(1009);
    const after = `after-oversized-${Date.now()}`;
    fs.appendFileSync(logFile, criLine(after));
    await eventually(async () => (other.lines().some((line) => line.text === after) ? true : undefined));
    expect(other.socket.readyState).toBe(WebSocket.OPEN);
    other.socket.close();
  });

  it("caps concurrent streams per user with a clear refusal", async () => {
    const streams = Array.from({ length: 6 }, () => open(podLogs(acme), as(acme)));
    await eventually(async () => (streams.every((s) => s.lines().length > 0) ? true : undefined));
    const seventh = open(podLogs(acme), as(acme));
    expect((await seventh.closed).code).toBe(closeCodes.tooMany);
    const error = seventh.frames.find((frame) => frame.type === "error");
    expect(error?.type === "error" && error.message).toMatch(/limit per user is 6/);
    for (const stream of streams) stream.socket.close();
    await Promise.all(streams.map((stream) => stream.closed));
  });

  it("holds a bounded amount for a client that stops reading, and loses nothing when it reads again", async () => {
    const stream = open(podLogs(acme, "&tailLines=1"), as(acme));
    await eventually(async () => (stream.lines().length > 0 ? true : undefined));
    // The client stops reading from its socket; then the pod writes ~40 MB of log (more than the
    // kernel's socket buffers hold, so the server's own queue would grow without back-pressure).
    const raw = (stream.socket as unknown as { _socket: import("node:net").Socket })._socket;
    raw.pause();
    const marker = `flood-${Date.now()}`;
    const count = 300_000;
    const filler = "x".repeat(100);
    const chunk: string[] = [];
    for (let i = 0; i < count; i++) {
      chunk.push(criLine(`${marker} ${i} ${filler}`));
      if (chunk.length === 5_000) fs.appendFileSync(logFile, chunk.splice(0).join(""));
    }
    let peak = 0;
    const sample = () => {
      for (const socket of handler.sockets())
        if (socket.path === "/ws/logs") peak = Math.max(peak, socket.bufferedAmount);
    };
    for (let i = 0, full = 0; i < 300 && full < 20; i++) {
      sample();
      if (peak > bufferBytes / 2) full += 1;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The upstream is paused past the high-water mark: at most that plus one batch in flight.
    expect(peak).toBeGreaterThan(bufferBytes / 2);
    expect(peak).toBeLessThanOrEqual(bufferBytes + 2 * 256 * 1024);

    raw.resume();
    const received = await eventually(async () => {
      const mine = stream.lines().filter((line) => line.text.startsWith(marker));
      return mine.length === count ? mine : undefined;
    }, 110_000);
    expect(received.map((line) => Number(line.text.split(" ")[1]))).toEqual(
      Array.from({ length: count }, (_, i) => i),
    );
    stream.socket.close();
  });
});
