/**
 * Issue 14's "every open stream ends when its right ends", attacked with real processes: a member
 * of a tenant with a real control plane (local provisioner) runs the real kubectl through the kube
 * gateway on its HTTPS listener — `get pods -w`, `logs -f`, `exec` — down the public path (gateway
 * → tenant apiserver → vn-agent → the simulated node). Then the token is revoked, the member
 * removed, the role lowered: each open stream must end within 10 s (asserted with a generous wait,
 * never on timing). The gateway is the runtime's own (startKubeGateway: the token cache, the
 * rechecks past it, the database and directory the world installs). Also: an exec session's
 * maximum length, and the budget of failed authentications per address and token.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { recordAudit } from "@/server/audit/service";
import { localSuperCluster } from "@/server/cluster/local";
import { CommandError, type RunResult, run } from "@/server/cluster/process";
import type { Ring0Role, SessionUser } from "@/server/core/roles";
import { parseEnv } from "@/server/env";
import { eventually } from "@/server/k8s/test-cluster";
import { createLogger } from "@/server/logger";
import { createTokenService } from "@/server/tokens/service";
import { createMembersService } from "@/server/users/members-service";
import { createUserRepository } from "@/server/users/repository";
import { type DataPlaneWorld, startDataPlaneWorld } from "@/test/integration/data-plane-world";
import { writeGatewayKubeconfig } from "@/test/integration/gateway-kubeconfig";
import { createKubeGateway, type KubeGateway } from "./gateway";
import { startKubeGateway } from "./index";
import { type GatewayListener, startGatewayListener } from "./listener";
import { ensureGatewayTls, type GatewayTls } from "./tls";

const logger = createLogger({ service: "stream-rights-it" }, "error");
const figures = createLogger({ service: "stream-rights-it" }, "info");
const suffix = Math.random().toString(36).slice(2, 7);
const acme = `acme-${suffix}`;
/** How long a stream may take to end after its right did: the promise is 10 s; the wait is generous. */
const endWithinMs = 15_000;

let world: DataPlaneWorld;
let workDir = "";
let kubectlBinary = "";
let tls: GatewayTls;
const gateways: KubeGateway[] = [];
const listeners: GatewayListener[] = [];
/** The runtime's gateway (startKubeGateway), on its HTTPS listener. */
let secureBase = "";
const children = new Set<ChildProcess>();
/** Time from a right ending to each stream ending, for the report. */
const endings: Array<{ what: string; ms: number }> = [];

async function listen(gateway: KubeGateway): Promise<string> {
  gateways.push(gateway);
  const listener = await startGatewayListener({ gateway, tls, port: 0, logger });
  listeners.push(listener);
  return `https://127.0.0.1:${listener.port}`;
}

function kubeconfigFor(token: string, base = secureBase): string {
  const file = path.join(workDir, `${token.slice(0, 12)}-${base.split(":").at(-1)}.kubeconfig`);
  return writeGatewayKubeconfig(file, { gatewayUrl: base, caPem: tls.caPem as string, tenant: acme, token });
}

const kubectlEnv = () => ({ PATH: process.env.PATH ?? "", HOME: workDir, NODE_ENV: "test" as const });

/** kubectl to completion; a non-zero exit is returned, not thrown. */
async function kubectl(token: string, args: string[], base = secureBase): Promise<RunResult> {
  try {
    return await run(
      kubectlBinary,
      ["--kubeconfig", kubeconfigFor(token, base), "--cache-dir", path.join(workDir, "cache"), ...args],
      { timeoutMs: 60_000, env: kubectlEnv() },
    );
  } catch (error) {
    if (error instanceof CommandError) return error.result;
    throw error;
  }
}

interface OpenStream {
  output(): string;
  /** Resolves with the exit code once kubectl has ended (null: killed by a signal). */
  exited: Promise<number | null>;
  running(): boolean;
}

/** A long-running kubectl (a watch, a followed log, a shell) as a real process. */
function openStream(token: string, args: string[], base = secureBase): OpenStream {
  const child = spawn(
    kubectlBinary,
    ["--kubeconfig", kubeconfigFor(token, base), "--cache-dir", path.join(workDir, "cache"), ...args],
    { env: kubectlEnv(), stdio: ["ignore", "pipe", "pipe"] },
  );
  children.add(child);
  let output = "";
  let done = false;
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      done = true;
      children.delete(child);
      resolve(code);
    }),
  );
  return { output: () => output, exited, running: () => !done };
}

/** Waits for a stream to end after its right ended at `since`; fails past the generous wait. */
async function endsSoon(stream: OpenStream, what: string, since: number): Promise<void> {
  const timeout = new Promise<"still open">((resolve) =>
    setTimeout(() => resolve("still open"), endWithinMs),
  );
  const outcome = await Promise.race([stream.exited.then(() => "ended" as const), timeout]);
  expect(outcome, `${what}: ${stream.output()}`).toBe("ended");
  endings.push({ what, ms: Date.now() - since });
}

async function signInMember(
  name: string,
  role: Ring0Role,
): Promise<{ user: SessionUser; token: string; tokenId: string }> {
  const identity = { subject: `${acme}:${name}`, tenant: acme, name, email: null, role };
  const recorded = await createUserRepository(world.db).recordSignIn(identity, new Date());
  const user: SessionUser = { ...identity, id: recorded.id };
  const issued = await createTokenService({ db: world.db }).issueToken({
    user,
    tenant: acme,
    name: "kubectl",
    expiresInDays: 1,
  });
  return { user, token: issued.plaintext, tokenId: issued.token.id };
}

const watchPods = (token: string, base?: string) =>
  openStream(token, ["get", "pods", "-w", "-o", "name"], base);
const followLogs = (token: string) => openStream(token, ["logs", "-f", "web"]);
const shell = (token: string, base?: string) =>
  openStream(token, ["exec", "web", "--", "sh", "-c", "echo shell-ready; sleep 60"], base);

/** Each stream serving: the watch listed the pod, the log its first line, the shell its greeting. */
async function serving(streams: Array<[OpenStream, string]>): Promise<void> {
  for (const [stream, marker] of streams) {
    await eventually(() => stream.output().includes(marker) || undefined, 60_000);
    expect(stream.running(), stream.output()).toBe(true);
  }
}

async function streamEndedEvents(reason: string) {
  return world.db.auditEvent
    .findMany({
      where: { action: "k8s.stream-ended", tenant: acme },
      orderBy: { at: "asc" },
    })
    .then((events) => events.filter((event) => (event.detail as { reason?: string }).reason === reason));
}

beforeAll(async () => {
  world = await startDataPlaneWorld({ tenants: [acme], logger, name: "stream-rights" });
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-stream-rights-"));
  kubectlBinary = await localSuperCluster({ stateDir: inject("superStateDir"), logger }).kubectlPath();
  tls = await ensureGatewayTls({ stateDir: workDir });
  // The runtime's wiring: the process-wide database and control plane directory the world installed.
  secureBase = await listen(
    startKubeGateway(parseEnv({ RING0_GATEWAY_RATE: "1000", RING0_GATEWAY_BURST: "1000" }), logger),
  );

  // A pod in acme, Running below on a simulated node that serves its log and its shell.
  await world.runningPod(acme, "web");
}, 300_000);

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  for (const listener of listeners) await listener.close();
  for (const gateway of gateways) gateway.close();
  await world?.stop();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  // The figures behind "within 10 s", for the record (never asserted: tests do not time things).
  if (endings.length > 0)
    figures.info("stream ends after the right ended", {
      endings: endings.map(({ what, ms }) => `${what}: ${ms} ms`),
    });
}, 180_000);

describe("every open stream ends when its right ends", { timeout: 180_000 }, () => {
  it("a member's open watch, log follow and exec end within 10 s of the token's revocation", async () => {
    const member = await signInMember("streamer", "tenant-member");
    const watch = watchPods(member.token);
    const logs = followLogs(member.token);
    const exec = shell(member.token);
    // Someone else's watch, which nothing here concerns.
    const bystander = watchPods(world.tokens[acme] as string);
    await serving([
      [watch, "pod/web"],
      [logs, "simulated pod"],
      [exec, "shell-ready"],
      [bystander, "pod/web"],
    ]);

    const revokedAt = Date.now();
    await createTokenService({ db: world.db }).revokeToken(member.tokenId, member.user);
    await Promise.all([
      endsSoon(watch, "watch after revocation", revokedAt),
      endsSoon(logs, "logs -f after revocation", revokedAt),
      endsSoon(exec, "exec after revocation", revokedAt),
    ]);

    expect(bystander.running(), bystander.output()).toBe(true);

    // Reconnecting gets what the token now carries: nothing.
    const again = await kubectl(member.token, ["get", "pods"]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/Unauthorized|must be logged in/i);
    // The shell's end is audited beside its start (k8s.exec), with why.
    const ended = await eventually(async () => {
      const events = await streamEndedEvents("credential-invalid");
      return events.find((event) => event.target?.endsWith("/pods/web/exec"));
    });
    expect(ended).toMatchObject({ actorId: member.user.id, result: "denied" });
  });

  it("a removed member's watch and log follow end within 10 s", async () => {
    const member = await signInMember("leaver", "tenant-member");
    const watch = watchPods(member.token);
    const logs = followLogs(member.token);
    await serving([
      [watch, "pod/web"],
      [logs, "simulated pod"],
    ]);

    const removedAt = Date.now();
    await createMembersService({ db: world.db }).remove(
      world.users[acme] as SessionUser,
      acme,
      member.user.id,
    );
    await Promise.all([
      endsSoon(watch, "watch after removal", removedAt),
      endsSoon(logs, "logs -f after removal", removedAt),
    ]);
    expect((await kubectl(member.token, ["get", "pods"])).code).not.toBe(0);
  });

  it("a role downgrade ends the watch and the shell; the reconnect gets what the new role allows", async () => {
    const member = await signInMember("demoted", "tenant-member");
    const watch = watchPods(member.token);
    const exec = shell(member.token);
    await serving([
      [watch, "pod/web"],
      [exec, "shell-ready"],
    ]);

    const loweredAt = Date.now();
    await createMembersService({ db: world.db }).setRole(
      world.users[acme] as SessionUser,
      acme,
      member.user.id,
      "tenant-viewer",
    );
    await Promise.all([
      endsSoon(watch, "watch after downgrade", loweredAt),
      endsSoon(exec, "exec after downgrade", loweredAt),
    ]);

    // The same token, now a viewer's: reading still works, a shell no longer does.
    const pods = await kubectl(member.token, ["get", "pods", "-o", "name"]);
    expect(pods.stdout.trim()).toBe("pod/web");
    const canExec = await kubectl(member.token, ["auth", "can-i", "create", "pods/exec"]);
    expect(canExec.stdout.trim()).toBe("no");
    const rewatch = watchPods(member.token);
    await serving([[rewatch, "pod/web"]]);
    expect(rewatch.running()).toBe(true);
  });

  it("an exec session ends at the maximum session length, audited", async () => {
    const tokens = createTokenService({ db: world.db });
    const base = await listen(
      createKubeGateway({
        authenticate: (plaintext) => tokens.verifyToken(plaintext),
        directory: () => world.directory,
        limits: { ratePerSecond: 1000, burst: 1000, maxLongRunning: 20 },
        maxExecSessionMs: 5_000,
        audit: recordAudit,
        logger,
      }),
    );
    const member = await signInMember("long-shell", "tenant-member");
    const exec = shell(member.token, base);
    await serving([[exec, "shell-ready"]]);
    const openedAt = Date.now();
    await endsSoon(exec, "exec at its maximum length (5 s)", openedAt);
    const ended = await eventually(async () =>
      (await streamEndedEvents("max-session")).find((event) => event.actorId === member.user.id),
    );
    expect(ended).toMatchObject({ result: "success", target: "/api/v1/namespaces/default/pods/web/exec" });
  });

  it("answers repeated bad tokens with 429 and Retry-After without looking them up; good tokens pass", async () => {
    const tokens = createTokenService({ db: world.db });
    let lookups = 0;
    const base = await listen(
      createKubeGateway({
        authenticate: (plaintext) => {
          lookups += 1;
          return tokens.verifyToken(plaintext);
        },
        directory: () => world.directory,
        limits: { ratePerSecond: 1000, burst: 1000, maxLongRunning: 20, authFailuresPerMinute: 5 },
        audit: recordAudit,
        logger,
      }),
    );
    const member = await signInMember("good-neighbour", "tenant-member");
    // Used once: the gateway now knows this token verifies.
    expect((await kubectl(member.token, ["get", "pods", "-o", "name"], base)).stdout.trim()).toBe("pod/web");

    const ask = (token: string) =>
      new Promise<{ status: number; retryAfter?: string; body: string }>((resolve, reject) => {
        https
          .get(
            `${base}/k8s/tenants/${acme}/api/v1/namespaces/default/pods`,
            { ca: tls.caPem as string, headers: { authorization: `Bearer ${token}` } },
            (response) => {
              let body = "";
              response.setEncoding("utf8");
              response.on("data", (chunk: string) => {
                body += chunk;
              });
              response.on("end", () =>
                resolve({
                  status: response.statusCode ?? 0,
                  retryAfter: response.headers["retry-after"] as string | undefined,
                  body,
                }),
              );
            },
          )
          .on("error", reject);
      });

    const revoked = await signInMember("revoked-script", "tenant-member");
    await tokens.revokeToken(revoked.tokenId, revoked.user);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++) statuses.push((await ask(revoked.token)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const before = lookups;
    const limited = await ask(revoked.token);
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(limited.body)).toMatchObject({
      kind: "Status",
      code: 429,
      message: expect.stringContaining("Too many failed authentications"),
    });
    expect(lookups).toBe(before);
    // Guesses under one made-up prefix from this address run out of budget the same way, and are
    // then refused without a lookup, whatever the rest of the token.
    const guess = (suffix: string) => `r0_${"x".repeat(43 - suffix.length)}${suffix}`;
    for (let attempt = 0; attempt < 5; attempt++)
      expect((await ask(guess(String(attempt)))).status).toBe(401);
    const lookupsBeforeGuess = lookups;
    expect((await ask(guess("y"))).status).toBe(429);
    expect(lookups).toBe(lookupsBeforeGuess);

    // The member who verified before is not slowed by their address's budget.
    const good = await ask(member.token);
    expect(good.status).toBe(200);
  });
});
