import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { parseEnv as parseDotEnv } from "node:util";
import next from "next";
import { TOOLBOX_IMAGE } from "@/server/cluster/real-node/plan";
import { SIMULATED_POD_LABEL } from "@/server/cluster/simulated-pods";
import { setStartPart } from "@/server/core/start-state";
import { setDatabaseProblem } from "@/server/db/client";
import { startEmbeddedPostgres } from "@/server/db/embedded-postgres";
import { applyMigrations } from "@/server/db/migrations";
import { ConfigError, type Env, env, parseEnv } from "@/server/env";
import { isGatewayPath, refuseGatewayOverPlainHttp, startKubeGateway } from "@/server/gateway";
import { startGatewayListener } from "@/server/gateway/listener";
import { kubeconfigCa, loadGatewayTls } from "@/server/gateway/tls";
import { startEmbeddedIam } from "@/server/iam/provider";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { superClusterProblem } from "@/server/k8s/super-cluster-state";
import { setGatewayEndpoint } from "@/server/kubeconfigs/gateway-endpoint";
import { type Logger, logger as rootLogger } from "@/server/logger";
import { startSharing } from "@/server/runtime/sharing";
import {
  AlreadyRunningError,
  acquireInstanceLock,
  ensureStateDir,
  loadOrCreateSecrets,
} from "@/server/runtime/state";
import { connectSuperCluster } from "@/server/runtime/super-cluster";
import { type SeedTenant, seedTenantsFrom, startTenants } from "@/server/runtime/tenants";
import { authenticateStream } from "@/server/streams/authenticate";
import { createExecEndpoint } from "@/server/streams/exec";
import { createLogsEndpoint } from "@/server/streams/logs";
import { pingEndpoint } from "@/server/streams/ping";
import { createStreamRegistry, setStreamRegistry } from "@/server/streams/registry";
import { createUpgradeHandler, isStreamPath } from "@/server/streams/upgrade";

/** Reads `.env` if present; variables already in the environment win. */
function loadDotEnv(): void {
  if (!fs.existsSync(".env")) return;
  const fromFile = Object.entries(parseDotEnv(fs.readFileSync(".env", "utf8")));
  for (const [name, value] of fromFile) process.env[name] ??= value;
}

class PortInUseError extends Error {
  override name = "PortInUseError";
}

export interface RunningRing0 {
  url: string;
  close(): Promise<void>;
  /** The super cluster, tenants and sharing starting behind the server; rejects if that fails. */
  background: Promise<void>;
}

/** How long stopping waits for a start of the world under way before stopping what is up. */
const WORLD_START_WAIT_MS = 20_000;

/**
 * The world behind Ring0's server: the super cluster (connected or started), then the tenants'
 * runtime (admission, controllers, syncer, vn-agents) and sharing, each saying in
 * server/core/start-state.ts when it is up. Stepping down is immediate (what has started steps
 * down); stopping waits, once and at most WORLD_START_WAIT_MS, for a start under way, and a part
 * that comes up after the world stopped is stopped at once, so nothing it starts outlives the stop.
 */
function worldStarter() {
  type Stop = () => Promise<void> | void;
  const cleanups: Stop[] = [];
  const stepDowns: Array<() => Promise<void>> = [];
  let starting: Promise<unknown> = Promise.resolve();
  let stopping = false;
  let stopped = false;
  let waited: Promise<unknown> | undefined;
  const settled = () => {
    waited ??= Promise.race([
      starting.catch(() => {}),
      new Promise((resolve) => setTimeout(resolve, WORLD_START_WAIT_MS).unref()),
    ]);
    return waited;
  };
  /** Keeps a part's stop for later, or stops it now when the world has already stopped. */
  const keep = async (cleanup: Stop, stepDown?: () => Promise<void>) => {
    if (!stopped) {
      cleanups.push(cleanup);
      if (stepDown) stepDowns.push(stepDown);
      return;
    }
    await stepDown?.();
    await cleanup();
  };
  return {
    stopping: () => stopping,
    start(runtime: Env, log: Logger, seedTenants: SeedTenant[]): Promise<ClusterConnection | null> {
      setStartPart("super-cluster", "starting");
      setStartPart("tenants", "starting");
      const run = async () => {
        let superCluster: Awaited<ReturnType<typeof connectSuperCluster>>;
        try {
          superCluster = await connectSuperCluster(runtime, log.child({ component: "super-cluster" }));
        } catch (error) {
          setStartPart("super-cluster", "failed", error instanceof Error ? error.message : String(error));
          setStartPart("tenants", "failed", "the super cluster did not start");
          throw error;
        }
        await keep(() => superCluster.stop());
        setStartPart("super-cluster", "ready");
        if (stopping) return superCluster.connection;
        try {
          const tenants = await startTenants(
            runtime,
            superCluster.connection,
            log.child({ component: "tenants" }),
            {
              seedTenants,
            },
          );
          await keep(
            () => tenants.stop(),
            () => tenants.stepDown(),
          );
        } catch (error) {
          setStartPart("tenants", "failed", error instanceof Error ? error.message : String(error));
          throw error;
        }
        if (stopping) return superCluster.connection;
        // Cross-tenant grants: a warm informer on every replica, their RBAC reconciled by the Lease holder.
        const sharing = startSharing(superCluster.connection, log.child({ component: "sharing" }));
        await keep(
          () => sharing.stop(),
          () => sharing.stepDown(),
        );
        setStartPart("tenants", "ready");
        log.info("super cluster, tenants and sharing started");
        return superCluster.connection;
      };
      const started = run();
      starting = started;
      return started;
    },
    async stepDown() {
      stopping = true;
      await Promise.all(stepDowns.map((stepDown) => stepDown()));
    },
    async stop() {
      stopping = true;
      await settled();
      stopped = true;
      await runCleanups(cleanups, rootLogger);
    },
  };
}

/** Runs cleanups last first, each failure logged and passed over, and empties the list. */
async function runCleanups(cleanups: Array<() => Promise<void> | void>, log: Logger): Promise<void> {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch (error) {
      log.warn("shutdown step failed", { error });
    }
  }
  cleanups.length = 0;
}

export interface SeededLogin {
  username: string;
  tenant: string;
  role: string;
  password: string;
}

const embeddedClientId = "ring0";

/** Reads the embedded IAM's seed file for the start banner (demo logins only). */
function seededLogins(accountsFile: string): SeededLogin[] {
  try {
    const seed = JSON.parse(fs.readFileSync(accountsFile, "utf8")) as {
      accounts?: Array<{ username: string; tenant: string; roles?: string[]; password?: string }>;
    };
    return (seed.accounts ?? [])
      .filter((account) => typeof account.password === "string")
      .map((account) => ({
        username: account.username,
        tenant: account.tenant,
        role: account.roles?.join(", ") ?? "",
        password: account.password as string,
      }));
  } catch {
    return [];
  }
}

/**
 * Starts Ring0 in this process: configuration, instance lock, PostgreSQL (embedded unless
 * DATABASE_URL is set), migrations, IAM (embedded unless OIDC_ISSUER is set), Next.js and the
 * /ws/ streams. Each embedded default exports its settings to process.env so Next's route
 * handlers (a separate module graph) see the same configuration.
 */
export async function startRing0(options: { dev: boolean; logger?: Logger }): Promise<RunningRing0> {
  const started = performance.now();
  const log = options.logger ?? rootLogger;
  loadDotEnv();
  (process.env as Record<string, string | undefined>).NODE_ENV ??= options.dev ? "development" : "production";
  const config = parseEnv(process.env);
  ensureStateDir(config.stateDir);
  const releaseLock = acquireInstanceLock(config.stateDir, config.publicUrl);
  const cleanups: Array<() => Promise<void> | void> = [releaseLock];
  const close = () => runCleanups(cleanups, log);

  try {
    const secrets = loadOrCreateSecrets(config.stateDir);
    process.env.NEXTAUTH_URL = config.publicUrl;
    process.env.NEXTAUTH_SECRET ??= secrets.nextauthSecret;

    // In production, Next.js prepares while PostgreSQL, migrations and the IAM start (it reads none
    // of what they export; in dev its .env reloads would drop those exports, so it waits for them).
    const app = next({ dev: options.dev, dir: process.cwd(), hostname: "localhost", port: config.PORT });
    const prepare = () => {
      const preparing = performance.now();
      return app
        .prepare()
        .then(() => log.info("Next.js prepared", { ms: Math.round(performance.now() - preparing) }));
    };
    const early = options.dev ? undefined : prepare();
    // Awaited below; a failure meanwhile must not go unhandled.
    early?.catch(() => {});

    if (!config.DATABASE_URL) {
      const postgres = await startEmbeddedPostgres({
        dataDir: path.join(config.stateDir, "postgres"),
        port: config.EMBEDDED_POSTGRES_PORT,
        logger: log.child({ component: "postgres" }),
        onDown: setDatabaseProblem,
      });
      cleanups.push(() => postgres.stop());
      process.env.DATABASE_URL = postgres.url;
      log.info("embedded PostgreSQL ready", { port: config.EMBEDDED_POSTGRES_PORT });
    }
    const migrations = await applyMigrations(
      process.env.DATABASE_URL as string,
      log.child({ component: "migrate" }),
    );
    log.info("database migrated", { applied: migrations.applied });

    let logins: SeededLogin[] = [];
    if (!config.OIDC_ISSUER) {
      const issuer = `http://localhost:${config.IAM_PORT}`;
      const iam = await startEmbeddedIam({
        port: config.IAM_PORT,
        issuer,
        stateDir: path.join(config.stateDir, "iam"),
        accountsFile: path.resolve(config.IAM_ACCOUNTS_FILE),
        clients: [
          {
            clientId: embeddedClientId,
            clientSecret: secrets.iamClientSecret,
            redirectUris: [`${config.publicUrl}/api/auth/callback/ring0-iam`],
            postLogoutRedirectUris: [`${config.publicUrl}/signed-out`],
          },
        ],
        logger: log.child({ component: "iam" }),
      });
      cleanups.push(() => iam.close());
      process.env.OIDC_ISSUER = iam.issuer;
      process.env.OIDC_CLIENT_ID = embeddedClientId;
      process.env.OIDC_CLIENT_SECRET = secrets.iamClientSecret;
      logins = seededLogins(path.resolve(config.IAM_ACCOUNTS_FILE));
    }
    const runtime = env();
    const prepared = early ?? prepare();
    // The world behind the server (super cluster, tenants, sharing) starts once it listens; its
    // parts are stopped after the listeners close and before IAM and PostgreSQL.
    const world = worldStarter();
    cleanups.push(() => world.stop());

    await prepared;
    const handle = app.getRequestHandler();
    const nextUpgrade = app.getUpgradeHandler();
    const streamRegistry = createStreamRegistry({
      perUser: runtime.RING0_STREAMS_PER_USER,
      perTenant: runtime.RING0_STREAMS_PER_TENANT,
    });
    setStreamRegistry(streamRegistry);
    const streamSettings = {
      // Node shells in the local world run on kwok, which serves exec for pods with this label.
      superPodLabels:
        !runtime.SUPER_KUBECONFIG && runtime.RING0_SUPER_CLUSTER === "local"
          ? { [SIMULATED_POD_LABEL]: "true" }
          : undefined,
      // The local world's real nodes have Ring0's toolbox, not busybox from a public registry.
      nodeShellImage:
        runtime.RING0_NODE_SHELL_IMAGE ??
        (!runtime.SUPER_KUBECONFIG && runtime.RING0_SUPER_CLUSTER === "local" ? TOOLBOX_IMAGE : undefined),
      bufferBytes: runtime.RING0_STREAM_BUFFER_BYTES,
      idleMs: runtime.RING0_STREAM_IDLE_SECONDS * 1000,
      maxSessionMs: runtime.RING0_STREAM_MAX_SECONDS * 1000,
    };
    const streams = createUpgradeHandler({
      allowedOrigins: runtime.allowedOrigins,
      authenticate: authenticateStream,
      endpoints: {
        "/ws/ping": pingEndpoint,
        "/ws/logs": createLogsEndpoint(streamSettings),
        "/ws/exec": createExecEndpoint(streamSettings),
      },
      maxPayload: runtime.RING0_WS_MAX_PAYLOAD,
      registry: streamRegistry,
      logger: log.child({ component: "ws" }),
    });
    cleanups.push(() => {
      streams.close();
      setStreamRegistry(null);
    });
    const gatewayLog = log.child({ component: "kube-gateway" });
    const kubeGateway = startKubeGateway(runtime, gatewayLog);
    cleanups.push(() => kubeGateway.close());
    // The gateway's own HTTPS listener: kubectl sends tokens only over TLS.
    const gatewayTls = await loadGatewayTls(runtime);
    if (gatewayTls.issued.length > 0)
      gatewayLog.info("kube gateway certificate issued", { issued: gatewayTls.issued });
    const gatewayListener = await startGatewayListener({
      gateway: kubeGateway,
      tls: gatewayTls,
      port: runtime.RING0_GATEWAY_PORT,
      host: runtime.RING0_LISTEN_ADDRESS,
      reload: async () => {
        const next = await loadGatewayTls(runtime);
        if (next.issued.length > 0 || next.source === "files") return next;
        return undefined;
      },
      logger: gatewayLog,
    }).catch((error: NodeJS.ErrnoException) => {
      throw error.code === "EADDRINUSE"
        ? new PortInUseError(
            `Port ${runtime.RING0_GATEWAY_PORT} on ${runtime.RING0_LISTEN_ADDRESS} is already in use: stop what uses it or set RING0_GATEWAY_PORT.`,
          )
        : error;
    });
    cleanups.push(() => gatewayListener.close());
    setGatewayEndpoint({ gatewayUrl: runtime.gatewayUrl, caPem: kubeconfigCa(runtime, gatewayTls) });
    cleanups.push(() => setGatewayEndpoint(null));

    // /k8s/* is the kube gateway's, served on its TLS port only: refused here with that URL, never Next's.
    const plainGateway = refuseGatewayOverPlainHttp(runtime.gatewayUrl);
    const server = http.createServer((request, response) => {
      if (isGatewayPath(request.url)) return plainGateway.handleRequest(request, response);
      handle(request, response).catch((error) => {
        log.error("request failed", { url: request.url, error });
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
    // Only /ws/* is ours; every other upgrade (Next's dev HMR included) stays Next's.
    server.on("upgrade", (request, socket, head) => {
      if (isStreamPath(request.url)) streams.handle(request, socket, head);
      else if (isGatewayPath(request.url)) plainGateway.handleUpgrade(request, socket, head);
      else void nextUpgrade(request, socket, head);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", (error: NodeJS.ErrnoException) =>
        reject(
          error.code === "EADDRINUSE"
            ? new PortInUseError(
                `Port ${runtime.PORT} on ${runtime.RING0_LISTEN_ADDRESS} is already in use: stop what uses it or set PORT.`,
              )
            : error,
        ),
      );
      server.listen(runtime.PORT, runtime.RING0_LISTEN_ADDRESS, () => resolve());
    });
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    cleanups.push(() => app.close());
    // First on the way down: leading ends (controllers, syncer) and the Leases go, so another
    // replica takes over at once, even when the pod's grace period ends before the listeners close.
    cleanups.push(() => world.stepDown());

    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const gatewayLine = `${runtime.gatewayUrl}/k8s/tenants/<tenant>${
      runtime.RING0_GATEWAY_URL
        ? ` (RING0_GATEWAY_URL; listening on https://${runtime.RING0_LISTEN_ADDRESS}:${runtime.RING0_GATEWAY_PORT})`
        : ""
    } · ${
      gatewayTls.source === "files"
        ? "certificate RING0_GATEWAY_TLS_CERT"
        : `Ring0's own CA ${path.relative(process.cwd(), gatewayTls.caFile ?? "")}`
    }`;
    printBanner(
      runtime.publicUrl,
      logins,
      seconds,
      Boolean(config.DATABASE_URL),
      Boolean(config.OIDC_ISSUER),
      "starting behind the server (/api/ready says when it is up)",
      gatewayLine,
    );
    // The embedded world starts with the seed file's tenants, each with its own control plane.
    const seedTenants =
      !config.OIDC_ISSUER && runtime.RING0_SEED_TENANTS === "on"
        ? seedTenantsFrom(logins, runtime.RING0_OPERATOR_TENANT)
        : [];
    const background = world.start(runtime, log, seedTenants).then((connection) => {
      const localKubeconfig = path.relative(
        process.cwd(),
        path.join(runtime.stateDir, "super-cluster.kubeconfig"),
      );
      const superClusterLine = connection
        ? config.SUPER_KUBECONFIG
          ? `SUPER_KUBECONFIG · ${connection.server}`
          : config.RING0_SUPER_CLUSTER === "in-cluster"
            ? `in-cluster (its service account) · ${connection.server}`
            : `local (kwok) · ${connection.server} · kubeconfig ${localKubeconfig}`
        : `unavailable (${superClusterProblem() ?? "disabled"})`;
      if (world.stopping()) return;
      const total = ((performance.now() - started) / 1000).toFixed(1);
      process.stdout.write(
        `  super cluster: ${superClusterLine}\n  tenants and controllers up (in ${total}s)\n\n`,
      );
    });
    return { url: runtime.publicUrl, close, background };
  } catch (error) {
    await close();
    throw error;
  }
}

function printBanner(
  url: string,
  logins: SeededLogin[],
  seconds: string,
  externalDb: boolean,
  externalIam: boolean,
  superCluster: string,
  kubeGateway: string,
) {
  const lines = [
    "",
    `  Ring0 is running at ${url}   (ready in ${seconds}s)`,
    `  database: ${externalDb ? "DATABASE_URL" : "embedded PostgreSQL"} · IAM: ${externalIam ? "OIDC_ISSUER" : "embedded"}`,
    `  super cluster: ${superCluster}`,
    `  kube gateway (kubectl): ${kubeGateway}`,
  ];
  if (logins.length > 0) {
    lines.push("", "  Seeded logins (embedded IAM):");
    for (const login of logins) {
      lines.push(
        `    ${login.username.padEnd(15)} ${login.password.padEnd(12)} ${login.tenant.padEnd(8)} ${login.role}`,
      );
    }
  }
  lines.push("", "  Stop with Ctrl-C.", "");
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** Entry point for server.ts: start, report configuration errors in one line, stop on signals. */
export async function main(argv: string[]): Promise<void> {
  const dev = argv.includes("--dev");
  let running: RunningRing0 | undefined;
  try {
    running = await startRing0({ dev });
  } catch (error) {
    if (
      error instanceof ConfigError ||
      error instanceof PortInUseError ||
      error instanceof AlreadyRunningError
    ) {
      process.stderr.write(`${error.message}\n`);
    } else {
      rootLogger.error("Ring0 failed to start", { error });
    }
    process.exit(1);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    rootLogger.info("stopping", { signal });
    await running?.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  // The world behind the server failing to start (no webhooks' Service in a cluster) ends Ring0
  // as a failed start did before it listened.
  running.background.catch(async (error) => {
    if (stopping) return;
    stopping = true;
    rootLogger.error("Ring0 failed to start", { error });
    await running?.close();
    process.exit(1);
  });
}
