/**
 * Shared pieces of the benchmarks that need Ring0's real parts: statistics, an embedded PostgreSQL
 * with migrations (for API tokens), tenant users and their tokens, the kube gateway served over
 * HTTPS in this process (the runtime's listener and Ring0's own gateway CA), plain HTTPS probes,
 * the real kubectl, RSS from /proc, and a leak check for everything started under one directory.
 */
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { recordAudit } from "@/server/audit/service";
import {
  CommandError,
  killProcessesMentioning,
  processesMentioning,
  type RunResult,
  run,
} from "@/server/cluster/process";
import { createPrismaClient, disconnectDb, type PrismaClient, setDatabaseUrl } from "@/server/db/client";
import { findFreePort, startEmbeddedPostgres } from "@/server/db/embedded-postgres";
import { applyMigrations } from "@/server/db/migrations";
import { createKubeGateway, type GatewaySharing } from "@/server/gateway/gateway";
import { startGatewayListener } from "@/server/gateway/listener";
import { ensureGatewayTls } from "@/server/gateway/tls";
import { cachingVerifier } from "@/server/gateway/token-cache";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { createLogger } from "@/server/logger";
import type { ControlPlaneAccess, Provisioner } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import { createConnectionCache } from "@/server/tenants/connections";
import type { ControlPlaneDirectory } from "@/server/tenants/control-planes";
import { applyTenantDefaults } from "@/server/tenants/defaults";
import { createTokenService } from "@/server/tokens/service";
import { createUserRepository } from "@/server/users/repository";

export const logger = createLogger({ service: "bench" }, "warn");

/**
 * `./ring0 test` (and so CI) runs every benchmark in its quick mode (RING0_BENCH_QUICK=1): smaller
 * sizes and shorter holds, every ratio still computed against its baseline. `npm run bench:*`
 * runs the full sizes the README's figures come from.
 */
export const quickMode = process.env.RING0_BENCH_QUICK === "1";

/** `full`, or `quick` in quick mode. */
export function sized<T>(full: T, quick: T): T {
  return quickMode ? quick : full;
}

export const round = (value: number, digits = 1) => +value.toFixed(digits);

/** Nearest-rank percentile. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(0, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.min(sorted.length - 1, rank)] ?? Number.NaN;
}

export function summary(samples: number[], digits = 1) {
  return {
    n: samples.length,
    p50: round(percentile(samples, 50), digits),
    p95: round(percentile(samples, 95), digits),
  };
}

/** a / b with two decimals. */
export const ratio = (a: number, b: number) => round(a / b, 2);

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function writeResults(name: string, result: unknown): void {
  fs.mkdirSync("bench/results", { recursive: true });
  const marked =
    result && typeof result === "object" ? { mode: quickMode ? "quick" : "full", ...result } : result;
  fs.writeFileSync(path.join("bench/results", `${name}.json`), `${JSON.stringify(marked, null, 2)}\n`);
}

export function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

/**
 * Cleanups run in reverse order, each one even when an earlier one failed. `run` is single-flight
 * (a signal and the bench's own `finally` share one run); once it has started, `stopping` is true
 * and the bench should start nothing new (`throwIfStopping`).
 */
export function cleanupStack() {
  const steps: Array<{ what: string; fn: () => Promise<unknown> | unknown }> = [];
  let running: Promise<string[]> | undefined;
  return {
    push(what: string, fn: () => Promise<unknown> | unknown) {
      steps.push({ what, fn });
    },
    get stopping() {
      return running !== undefined;
    },
    throwIfStopping() {
      if (running) throw new Error("stopping: cleaning up");
    },
    run(): Promise<string[]> {
      running ??= (async () => {
        const failures: string[] = [];
        while (steps.length > 0) {
          const step = steps.pop() as (typeof steps)[number];
          try {
            await step.fn();
          } catch (error) {
            failures.push(`${step.what}: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
        return failures;
      })();
      return running;
    },
  };
}

/**
 * Ctrl-C or a SIGTERM (a CI timeout) still cleans up: the stack runs, then whatever is left under
 * `dir` is killed and the dir removed, and the process exits 130.
 */
export function cleanUpOnSignal(cleanup: ReturnType<typeof cleanupStack>, dir: string): void {
  const stop = (signal: NodeJS.Signals) => {
    process.stderr.write(`${signal}: cleaning up\n`);
    void cleanup
      .run()
      .then(() => reapLeftovers(dir))
      .finally(() => {
        fs.rmSync(dir, { recursive: true, force: true });
        process.exit(130);
      });
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/**
 * Nothing started under `dir` may outlive the bench: kill what is left (a leak) and report it.
 * Returns the pids that had to be killed.
 */
export async function reapLeftovers(dir: string): Promise<number[]> {
  const needle = `${dir}/`;
  if (processesMentioning(needle).length === 0) return [];
  return killProcessesMentioning(needle);
}

/**
 * The end of a bench run, failed or not: the cleanup stack runs, whatever is left under `root` is
 * killed (a leak fails the run) and `root` removed. Returns what the run fails with, if anything.
 */
export async function finishBench(
  cleanup: ReturnType<typeof cleanupStack>,
  root: string,
  failed: unknown,
): Promise<unknown> {
  const failures = await cleanup.run();
  const leaked = await reapLeftovers(root);
  fs.rmSync(root, { recursive: true, force: true });
  if (failures.length > 0) process.stderr.write(`cleanup problems:\n  ${failures.join("\n  ")}\n`);
  if (leaked.length > 0) {
    process.stderr.write(`processes outlived their cleanup and were killed: ${leaked.join(", ")}\n`);
    return failed ?? new Error("processes leaked");
  }
  return failed;
}

/** Exits 0 when the bench's main resolves; prints the error and exits 1 when it rejects. */
export function exitWhenDone(main: Promise<void>): void {
  void main.then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}

/**
 * A temp dir for one run, marked with this process's pid. Runs of the same bench that were killed
 * outright (SIGKILL, or a wrapper that did not pass the signal on) are swept first: their leftover
 * processes are killed and their dirs removed, so a killed run never leaks for long.
 */
export async function benchDir(prefix: string): Promise<string> {
  for (const entry of fs.readdirSync(os.tmpdir())) {
    if (!entry.startsWith(prefix)) continue;
    const dir = path.join(os.tmpdir(), entry);
    let owner = Number.NaN;
    try {
      owner = Number(fs.readFileSync(path.join(dir, "owner.pid"), "utf8"));
    } catch {
      // no pid file: abandoned only when old (a run writes it right after creating the dir)
      if (Date.now() - fs.statSync(dir).mtimeMs < 5 * 60_000) continue;
    }
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) continue;
    const killed = await reapLeftovers(dir);
    fs.rmSync(dir, { recursive: true, force: true });
    say(`swept an abandoned run's ${dir}${killed.length ? ` (killed ${killed.join(", ")})` : ""}`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.writeFileSync(path.join(dir, "owner.pid"), String(process.pid));
  // Root runs embedded PostgreSQL as a separate user, which must traverse the dir.
  fs.chmodSync(dir, 0o755);
  return dir;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface BenchDatabase {
  url: string;
  db: PrismaClient;
  stop(): Promise<void>;
}

/** Embedded PostgreSQL on a free port with its data under `dir`, migrated; the process-wide client too. */
export async function startDatabase(dir: string): Promise<BenchDatabase> {
  let server: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
  for (let attempt = 1; !server; attempt++) {
    try {
      server = await startEmbeddedPostgres({
        dataDir: path.join(dir, "data"),
        port: await findFreePort(),
        logger,
        database: "ring0",
      });
    } catch (error) {
      if (attempt >= 3 || !/failed to start|already in use/.test(String(error))) throw error;
    }
  }
  const started = server;
  try {
    await applyMigrations(started.url, logger);
  } catch (error) {
    await started.stop();
    throw error;
  }
  // recordAudit (the gateway's audit sink) uses the process-wide client.
  setDatabaseUrl(started.url);
  const db = createPrismaClient(started.url);
  return {
    url: started.url,
    db,
    async stop() {
      await db.$disconnect().catch(() => undefined);
      await disconnectDb().catch(() => undefined);
      await started.stop();
    },
  };
}

/** A tenant admin (or member) as the IAM would sign them in, and an API token of theirs for `tenant`. */
export async function tenantAdminToken(
  db: PrismaClient,
  tenant: string,
  role: "tenant-admin" | "tenant-member" = "tenant-admin",
): Promise<string> {
  const who = role === "tenant-admin" ? "admin" : "member";
  const identity = {
    subject: `${tenant}:${tenant}-${who}`,
    tenant,
    name: `${who === "admin" ? "Admin" : "Member"} of ${tenant}`,
    role,
    email: null,
  };
  const row = await createUserRepository(db).recordSignIn(identity, new Date());
  const issued = await createTokenService({ db }).issueToken({
    user: { id: row.id, subject: identity.subject, name: identity.name, email: null, tenant, role },
    tenant,
    name: "bench",
    expiresInDays: 1,
  });
  return issued.plaintext;
}

export interface BenchGateway {
  /** https://127.0.0.1:<port> */
  url: string;
  /** PEM CA of the listener's certificate (Ring0's own gateway CA). */
  ca: string;
  close(): Promise<void>;
}

/**
 * The kube gateway as the runtime wires it (real token verification against PostgreSQL, cached
 * for 2 s like the runtime's, audit
 * through recordAudit) behind its HTTPS listener on 127.0.0.1. Limits are set high enough that
 * the bench never meets them: it measures forwarding, not the rate limiter. `sharing`, when given,
 * lets tokens of other tenants in within its grants (without it, a token reaches its own tenant only).
 */
export async function startBenchGateway(
  dir: string,
  db: PrismaClient,
  directory: ControlPlaneDirectory,
  options: { sharing?: GatewaySharing } = {},
): Promise<BenchGateway> {
  const tokens = createTokenService({ db });
  const gateway = createKubeGateway({
    // As the runtime does: successes reused for 2 s (server/gateway/token-cache.ts).
    authenticate: cachingVerifier((plaintext) => tokens.verifyToken(plaintext)),
    directory: () => directory,
    limits: { ratePerSecond: 100_000, burst: 100_000, maxLongRunning: 1_000 },
    audit: recordAudit,
    logger,
    sharing: options.sharing,
  });
  const tls = await ensureGatewayTls({ stateDir: dir });
  const listener = await startGatewayListener({ gateway, tls, port: 0, logger });
  return {
    url: `https://127.0.0.1:${listener.port}`,
    ca: tls.caPem as string,
    async close() {
      await listener.close();
      gateway.close();
    },
  };
}

/** A kubeconfig as Ring0 hands one out: the gateway's tenant URL, its CA, a bearer token. */
export function writeTokenKubeconfig(file: string, server: string, ca: string, token: string): string {
  fs.writeFileSync(
    file,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{name: ring0, cluster: {server: '${server}', certificate-authority-data: ${Buffer.from(ca).toString("base64")}}}]`,
      `users: [{name: me, user: {token: '${token}'}}]`,
      "contexts: [{name: ring0, context: {cluster: ring0, user: me}}]",
      "current-context: ring0",
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  return file;
}

/** Who a plain HTTPS request is: a bearer token (through the gateway) or a client certificate. */
export interface HttpsIdentity {
  ca: string;
  token?: string;
  cert?: string;
  key?: string;
}

export function httpsAgent(identity: HttpsIdentity, keepAlive: boolean): https.Agent {
  return new https.Agent({
    keepAlive,
    maxSockets: keepAlive ? 1 : Number.POSITIVE_INFINITY,
    ca: identity.ca,
    cert: identity.cert,
    key: identity.key,
  });
}

export interface HttpsAnswer {
  status: number;
  body: string;
}

/** One request; the body is read to the end. */
export function httpsRequest(
  url: string,
  identity: HttpsIdentity,
  options: {
    agent?: https.Agent;
    method?: string;
    body?: unknown;
    timeoutMs?: number;
    headers?: Record<string, string | string[]>;
  } = {},
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { accept: "application/json", ...options.headers };
    if (identity.token) headers.authorization = `Bearer ${identity.token}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const request = https.request(
      url,
      {
        method: options.method ?? "GET",
        headers,
        agent: options.agent ?? httpsAgent(identity, false),
        timeout: options.timeoutMs ?? 10_000,
      },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error(`timed out: ${url}`)));
    request.on("error", reject);
    request.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

/** kubectl with its own HOME and discovery cache; a non-zero exit is returned, not thrown. */
export async function kubectl(
  binary: string,
  kubeconfig: string,
  cacheDir: string,
  args: string[],
): Promise<RunResult> {
  try {
    return await run(binary, ["--kubeconfig", kubeconfig, "--cache-dir", cacheDir, ...args], {
      timeoutMs: 60_000,
      env: { PATH: process.env.PATH, HOME: path.dirname(cacheDir) },
    });
  } catch (error) {
    if (error instanceof CommandError) return error.result;
    throw error;
  }
}

/** VmRSS of a process in KiB (0 when it is gone). */
export function rssKiB(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Poll `probe` every `everyMs` until it yields true; throws naming `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  options: { timeoutMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: timed out`);
    await sleep(options.everyMs ?? 100);
  }
}

/**
 * Wait until `tenant`'s control plane (ensured already) is Running and resolve with its access.
 * A control plane that fails meanwhile is ensured again, as the tenant reconciler does (a
 * component can lose its port to another process while ten start at once). A timeout names the
 * last phase and message seen.
 */
export async function controlPlaneRunning(
  provisioner: Provisioner,
  tenant: string,
  version: string,
  options: { timeoutMs: number; everyMs: number; check?: () => void; log?: (line: string) => void },
): Promise<ControlPlaneAccess> {
  const deadline = Date.now() + options.timeoutMs;
  let last = "not observed yet";
  let ensureError = "";
  for (let ensured = 0; ; ) {
    options.check?.();
    const observed = await provisioner.observe(tenant).catch((error: unknown) => ({
      phase: "Unknown",
      message: error instanceof Error ? error.message : String(error),
    }));
    last = `${observed.phase}${observed.message ? `: ${observed.message}` : ""}`;
    if (observed.phase === "Running") {
      const access = await provisioner.access(tenant);
      if (access) return access;
    } else if (observed.phase === "Failed" && ensured < 3) {
      ensured++;
      options.log?.(`${tenant}'s control plane failed (${last}); ensuring it again`);
      await provisioner.ensure({ tenant, version, suspended: false }).catch((error: unknown) => {
        ensureError = `; ensuring it again failed: ${error instanceof Error ? error.message : String(error)}`;
      });
    }
    if (Date.now() > deadline)
      throw new Error(`${tenant}'s control plane running: timed out (last seen: ${last}${ensureError})`);
    await sleep(options.everyMs);
  }
}

/**
 * One tenant control plane of `provisioner`, serving with the tenant defaults in force: resolves
 * with its admin access and a connection. `check` runs on every poll (e.g. to stop when the run is
 * being stopped).
 */
export async function startBenchTenant(
  provisioner: Provisioner,
  tenant: string,
  options: { timeoutMs?: number; check?: () => void } = {},
): Promise<{ access: ControlPlaneAccess; conn: ClusterConnection }> {
  const version = availableVersions()[0] as string;
  await provisioner.ensure({ tenant, version, suspended: false });
  const served = await controlPlaneRunning(provisioner, tenant, version, {
    timeoutMs: options.timeoutMs ?? 240_000,
    everyMs: 250,
    check: options.check,
  });
  const conn = createConnectionCache().connectionFor(tenant, served);
  await waitFor(
    "tenant defaults effective",
    async () => (await applyTenantDefaults(conn, { tenant, admins: [] })) === undefined,
    { timeoutMs: 120_000, everyMs: 500 },
  );
  return { access: served, conn };
}
