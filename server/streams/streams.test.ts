import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import type { WebSocket } from "ws";
import type { SessionUser } from "@/server/core/roles";
import { closeCodes, execQuery, streamSources } from "@/server/core/stream-protocol";
import type { KubeObject } from "@/server/k8s/apply";
import { createLogRing, teeLogger } from "@/server/log-ring";
import { createLogger } from "@/server/logger";
import { execPath, exitFromStatus, shellCommand } from "./exec-command";
import { createFlow } from "./flow";
import { createBatcher, createLineSplitter, parseLogLine } from "./lines";
import { closeCodeFor, sourceRefusal } from "./logs";
import { kwokLineFor, selectLines, tailFile } from "./node-logs";
import { nodeShellLabel, nodeShellNamespace, nodeShellPod } from "./node-shell";
import { createStreamRegistry } from "./registry";
import { closeReasonOf as closeReason } from "./upgrade";

const user = (role: SessionUser["role"], tenant = "acme"): SessionUser => ({
  id: "u",
  subject: `${tenant}:someone`,
  name: "Someone",
  email: null,
  tenant,
  role,
});

describe("log lines", () => {
  it("splits chunks on newlines, across chunk boundaries, keeping the unterminated rest for the end", () => {
    const splitter = createLineSplitter();
    expect(splitter.push(Buffer.from("a\nb"))).toEqual(["a"]);
    expect(splitter.push(Buffer.from("c\r\nd"))).toEqual(["bc"]);
    expect(splitter.end()).toEqual(["d"]);
    expect(splitter.end()).toEqual([]);
  });

  it("cuts a line longer than the cap instead of buffering it", () => {
    const splitter = createLineSplitter(8);
    expect(splitter.push(Buffer.from("0123456789abcdef"))).toEqual([]);
    expect(splitter.push(Buffer.from("more\nnext\n"))).toEqual(["01234567 …[line cut at 8 bytes]", "next"]);
  });

  it("keeps multi-byte characters split across chunks intact", () => {
    const splitter = createLineSplitter();
    const bytes = Buffer.from("grüße\n");
    expect([...splitter.push(bytes.subarray(0, 3)), ...splitter.push(bytes.subarray(3))]).toEqual(["grüße"]);
  });

  it("parses the kubelet's timestamp off a line; lines without one keep an empty timestamp", () => {
    expect(parseLogLine("2026-11-21T10:00:00.123456789Z hello world")).toEqual({
      ts: "2026-11-21T10:00:00.123456789Z",
      text: "hello world",
    });
    expect(parseLogLine("2026-11-21T10:00:00+02:00 x")).toEqual({
      ts: "2026-11-21T10:00:00+02:00",
      text: "x",
    });
    expect(parseLogLine("no timestamp")).toEqual({ ts: "", text: "no timestamp" });
  });

  it("batches by line count and flushes on demand", () => {
    const sent: number[] = [];
    const batcher = createBatcher((lines) => sent.push(lines.length), {
      maxBatchLines: 3,
      intervalMs: 60_000,
    });
    for (let i = 0; i < 7; i++) batcher.add({ ts: "", text: String(i) });
    expect(sent).toEqual([3, 3]);
    expect(batcher.heldBytes()).toBeGreaterThan(0);
    batcher.flush();
    expect(sent).toEqual([3, 3, 1]);
    batcher.stop();
  });
});

describe("stream registry", () => {
  it("caps streams per user and per tenant, naming the limit, and frees a slot on release", () => {
    const registry = createStreamRegistry({ perUser: 2, perTenant: 3 });
    const close = vi.fn();
    const a = registry.admit({ subject: "s1", tenant: "acme", kind: "logs", close });
    const b = registry.admit({ subject: "s1", tenant: "acme", kind: "exec", close });
    const c = registry.admit({ subject: "s1", tenant: "acme", kind: "logs", close });
    expect(a.ok && b.ok).toBe(true);
    expect(c).toMatchObject({ ok: false, message: expect.stringContaining("limit per user is 2") });
    expect(registry.admit({ subject: "s2", tenant: "acme", kind: "logs", close }).ok).toBe(true);
    expect(registry.admit({ subject: "s3", tenant: "acme", kind: "logs", close })).toMatchObject({
      ok: false,
      message: expect.stringContaining('Tenant "acme" already has 3'),
    });
    if (a.ok) a.release();
    expect(registry.admit({ subject: "s3", tenant: "acme", kind: "logs", close }).ok).toBe(true);
    expect(registry.counts()).toEqual({ total: 3, byKind: { exec: 1, logs: 2 } });
  });

  it("closes every stream of one user and only theirs", () => {
    const registry = createStreamRegistry({ perUser: 5, perTenant: 50 });
    const mine = vi.fn();
    const theirs = vi.fn();
    registry.admit({ subject: "me", tenant: "acme", kind: "logs", close: mine });
    registry.admit({ subject: "me", tenant: "acme", kind: "exec", close: mine });
    registry.admit({ subject: "you", tenant: "acme", kind: "logs", close: theirs });
    expect(registry.closeSubject("me", closeCodes.sessionEnded, "bye")).toBe(2);
    expect(mine).toHaveBeenCalledWith(closeCodes.sessionEnded, "bye");
    expect(theirs).not.toHaveBeenCalled();
    expect(registry.counts().total).toBe(1);
  });
});

describe("who may open which source", () => {
  const session = {
    method: "session" as const,
    confinedTo: null,
    credential: { key: "session:test", current: async () => null },
  };
  it("lets a tenant's users reach its pods and hides other tenants as not found", () => {
    expect(
      sourceRefusal({ source: "tenant-pod", tenant: "acme" }, { user: user("tenant-member"), auth: session }),
    ).toBeNull();
    expect(
      sourceRefusal(
        { source: "tenant-pod", tenant: "globex" },
        { user: user("tenant-admin"), auth: session },
      ),
    ).toEqual({
      status: 404,
      message: 'Tenant "globex" was not found.',
    });
  });

  it("keeps super-cluster pods and nodes to operators, and confines tokens to their tenant", () => {
    // Every source but a tenant's own pods: super pods and every kind of node log.
    for (const source of streamSources.filter((candidate) => candidate !== "tenant-pod")) {
      expect(sourceRefusal({ source }, { user: user("tenant-admin"), auth: session })?.status).toBe(403);
      expect(sourceRefusal({ source }, { user: user("operator", "ring0"), auth: session })).toBeNull();
    }
    const confined = { ...session, method: "token" as const, confinedTo: "acme" };
    expect(
      sourceRefusal({ source: "vn-agent" }, { user: user("operator", "ring0"), auth: confined })?.status,
    ).toBe(403);
    expect(
      sourceRefusal(
        { source: "tenant-pod", tenant: "globex" },
        { user: user("operator", "ring0"), auth: confined },
      )?.status,
    ).toBe(404);
    expect(
      sourceRefusal(
        { source: "tenant-pod", tenant: "acme" },
        { user: user("operator", "ring0"), auth: confined },
      ),
    ).toBeNull();
  });

  it("maps upstream statuses to close codes", () => {
    expect(closeCodeFor(404)).toBe(closeCodes.notFound);
    expect(closeCodeFor(403)).toBe(closeCodes.forbidden);
    expect(closeCodeFor(400)).toBe(closeCodes.badRequest);
    expect(closeCodeFor(422)).toBe(closeCodes.badRequest);
    expect(closeCodeFor(500)).toBe(closeCodes.upstream);
    expect(closeCodeFor(503)).toBe(closeCodes.unavailable);
  });
});

describe("exec", () => {
  it("runs fixed shell commands only, and builds the exec path with a tty and stdin", () => {
    expect(shellCommand("bash")).toEqual(["bash"]);
    expect(shellCommand("sh")).toEqual(["sh"]);
    expect(shellCommand("auto")[0]).toBe("/bin/sh");
    const query = execQuery.parse({
      source: "tenant-pod",
      tenant: "acme",
      namespace: "ns",
      pod: "web",
      container: "c",
    });
    const url = new URL(`http://x${execPath(query, ["sh", "-c", "a b"])}`);
    expect(url.pathname).toBe("/api/v1/namespaces/ns/pods/web/exec");
    expect(url.searchParams.getAll("command")).toEqual(["sh", "-c", "a b"]);
    expect(
      Object.fromEntries(["stdin", "stdout", "tty", "container"].map((k) => [k, url.searchParams.get(k)])),
    ).toEqual({
      stdin: "true",
      stdout: "true",
      tty: "true",
      container: "c",
    });
  });

  it("refuses a shell outside the allowed set", () => {
    expect(
      execQuery.safeParse({ source: "tenant-pod", tenant: "a", namespace: "n", pod: "p", shell: "zsh -c x" })
        .success,
    ).toBe(false);
  });

  it("reads exit codes from the status channel however the runtime reports them", () => {
    expect(exitFromStatus('{"status":"Success"}')).toEqual({ code: 0, reason: "exited" });
    expect(
      exitFromStatus(
        '{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}',
      ),
    ).toEqual({ code: 3, reason: "exited" });
    expect(exitFromStatus('{"status":"Failure","message":"command terminated: exit status 127"}')).toEqual({
      code: 127,
      reason: "exited",
    });
    expect(exitFromStatus('{"status":"Failure","message":"container not found"}')).toEqual({
      code: null,
      reason: "container not found",
    });
    expect(exitFromStatus("garbage").code).toBeNull();
  });

  it("keeps close reasons within a close frame's 123 bytes", () => {
    expect(Buffer.byteLength(closeReason("ü".repeat(200)))).toBeLessThanOrEqual(123);
    expect(closeReason("short")).toBe("short");
  });
});

describe("node shells", () => {
  it("pins a pod like kubectl debug node does, labelled, expiring, with a deadline", () => {
    const pod = nodeShellPod({
      node: "n1",
      name: "node-shell-n1-abc",
      openedBy: "ring0:operator",
      maxSeconds: 600,
      now: new Date("2026-01-01T00:00:00Z"),
      extraLabels: { "ring0.dev/kwok-exec": "true" },
    }) as KubeObject & { spec: Record<string, unknown> };
    expect(pod.metadata.namespace).toBe(nodeShellNamespace);
    expect(pod.metadata.labels).toMatchObject({ [nodeShellLabel]: "true", "ring0.dev/kwok-exec": "true" });
    expect(pod.metadata.annotations?.["ring0.dev/expires-at"]).toBe("2026-01-01T00:10:00.000Z");
    expect(pod.spec).toMatchObject({
      nodeName: "n1",
      activeDeadlineSeconds: 600,
      hostPID: true,
      restartPolicy: "Never",
    });
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect((pod.spec.containers as { image: string }[])[0]?.image).toBe("busybox:1.37");
    const local = nodeShellPod({
      node: "ring0-real-0",
      name: "s",
      openedBy: "op",
      maxSeconds: 60,
      now: new Date(),
      image: "localhost/ring0/toolbox:1",
    }) as KubeObject & { spec: { containers: { image: string }[] } };
    expect(local.spec.containers[0]?.image).toBe("localhost/ring0/toolbox:1");
  });
});

describe("back-pressure", () => {
  function fakeSocket() {
    return { OPEN: 1, readyState: 1, bufferedAmount: 0, send: vi.fn() };
  }

  it("pauses the upstream past the high-water mark and resumes once half has drained", async () => {
    const socket = fakeSocket();
    const upstream = { pause: vi.fn(), resume: vi.fn() };
    const flow = createFlow(socket as unknown as WebSocket, 100, 5);
    flow.attach(upstream);
    socket.bufferedAmount = 50;
    flow.send("a");
    expect(upstream.pause).not.toHaveBeenCalled();
    socket.bufferedAmount = 150;
    flow.send("b");
    expect(upstream.pause).toHaveBeenCalledTimes(1);
    expect(flow.state().pressured).toBe(true);
    socket.bufferedAmount = 60;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(upstream.resume).not.toHaveBeenCalled();
    socket.bufferedAmount = 40;
    await vi.waitFor(() => expect(upstream.resume).toHaveBeenCalledTimes(1));
    flow.stop();
  });

  it("keeps a user's pause while the pressure comes and goes", async () => {
    const socket = fakeSocket();
    const upstream = { pause: vi.fn(), resume: vi.fn() };
    const flow = createFlow(socket as unknown as WebSocket, 100, 5);
    flow.attach(upstream);
    flow.hold(true);
    expect(upstream.pause).toHaveBeenCalledTimes(1);
    socket.bufferedAmount = 500;
    flow.send("x");
    socket.bufferedAmount = 0;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(upstream.resume).not.toHaveBeenCalled();
    flow.hold(false);
    expect(upstream.resume).toHaveBeenCalledTimes(1);
    flow.stop();
  });

  it("pauses an upstream attached while the user holds the stream", () => {
    const socket = fakeSocket();
    const flow = createFlow(socket as unknown as WebSocket, 100);
    flow.hold(true);
    const upstream = { pause: vi.fn(), resume: vi.fn() };
    flow.attach(upstream);
    expect(upstream.pause).toHaveBeenCalledTimes(1);
  });
});

async function collect(stream: Readable, lines: number): Promise<string[]> {
  const got: string[] = [];
  let rest = "";
  for await (const chunk of stream) {
    rest += String(chunk);
    const parts = rest.split("\n");
    rest = parts.pop() ?? "";
    got.push(...parts);
    if (got.length >= lines) break;
  }
  return got;
}

describe("node logs", () => {
  it("keeps the last lines of a ring and tells listeners about new ones", () => {
    const ring = createLogRing(3);
    const heard: string[] = [];
    const stop = ring.subscribe((line) => heard.push(line));
    for (const line of ["a", "b", "c", "d"]) ring.append(line);
    stop();
    ring.append("e");
    expect(ring.lines()).toEqual(["c", "d", "e"]);
    expect(heard).toEqual(["a", "b", "c", "d"]);
  });

  it("tees a logger into the ring with its fields, child fields included", () => {
    const ring = createLogRing();
    const base = createLogger({}, "error");
    const log = teeLogger(base, ring).child({ node: "n1" });
    log.info("request", { verb: "exec", tenant: "acme" });
    expect(ring.lines()[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\S+ INFO request node=n1 verb=exec tenant=acme$/);
  });

  it("applies since and tail to timestamped lines", () => {
    const lines = ["2026-01-01T00:00:01Z a", "2026-01-01T00:00:02.5Z b", "2026-01-01T00:00:03Z c"];
    expect(selectLines(lines, { tailLines: 2 })).toEqual(lines.slice(1));
    expect(selectLines(lines, { sinceTime: "2026-01-01T00:00:02Z" })).toEqual(lines.slice(1));
    expect(selectLines(lines, { tailLines: 0 })).toEqual([]);
  });

  it("keeps kwok's lines about exactly this node, formatted", () => {
    const line = JSON.stringify({
      time: "2026-11-21T11:13:50Z",
      level: "INFO",
      msg: "Creating lease",
      id: "x",
      node: "ring0-node-1",
    });
    expect(kwokLineFor("ring0-node-1", line)).toBe(
      "2026-11-21T11:13:50Z INFO Creating lease node=ring0-node-1",
    );
    expect(kwokLineFor("ring0-node-10", line)).toBeNull();
    expect(kwokLineFor("ring0-node", line)).toBeNull();
    expect(kwokLineFor("ring0-node-1", "not json ring0-node-1")).toBeNull();
  });

  it("tails a file and follows what is appended, and survives the file being truncated", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-tail-"));
    const file = path.join(dir, "log");
    fs.writeFileSync(file, "2026-01-01T00:00:01Z one\n2026-01-01T00:00:02Z two\n");
    const abort = new AbortController();
    const stream = tailFile(file, (raw) => raw, { tailLines: 1, follow: true }, abort.signal, 10);
    const first = collect(stream, 3);
    fs.appendFileSync(file, "2026-01-01T00:00:03Z three\n");
    await new Promise((resolve) => setTimeout(resolve, 50));
    fs.writeFileSync(file, "2026-01-01T00:00:04Z four\n");
    expect(await first).toEqual([
      "2026-01-01T00:00:02Z two",
      "2026-01-01T00:00:03Z three",
      "2026-01-01T00:00:04Z four",
    ]);
    abort.abort();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
