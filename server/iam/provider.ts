/**
 * Ring0's embedded identity provider: an oidc-provider instance on 127.0.0.1 that Ring0 starts
 * when no external issuer is configured. It owns its login page (no dev interactions), grants
 * consent implicitly for the configured first-party clients, puts tenant and roles in the ID token,
 * logs out without a confirmation page when the RP sends a valid id_token_hint, and keeps its keys
 * and stateful artifacts (sessions, grants, tokens) in `stateDir` so a restart changes nothing.
 *
 * This file wires the parts and serves them on one HTTP server: `configuration.ts` (clients, claims,
 * consent, sign-out), `interactions.ts` (the sign-in form), `pages.ts` (HTML), `store.ts` (the
 * state directory) and `throttle.ts` (repeated sign-in failures).
 */
import { mkdir } from "node:fs/promises";
import http from "node:http";
import Provider, { type errors, type KoaContextWithOIDC } from "oidc-provider";
import { getDatabaseUrl, getDb } from "@/server/db/client";
import type { Logger } from "@/server/logger";
import { createIamAccountRepository } from "./account-repository";
import {
  type AccountStore,
  createAccountDirectory,
  createAccountStore,
  readAccountsFile,
  type StoredAccountSource,
} from "./accounts";
import { type EmbeddedIamClient, providerConfiguration } from "./configuration";
import { createInteractionHandler, interactionRoute } from "./interactions";
import { createPages } from "./pages";
import { registerEmbeddedIam } from "./registry";
import { loadCookieKeys, loadSigningKeys, openFileStore } from "./store";
import { createLoginThrottle } from "./throttle";

export { type EmbeddedIamClient, IAM_SCOPES } from "./configuration";

export interface StartEmbeddedIamOptions {
  port: number;
  /** The address it listens on (default 127.0.0.1; a pod's IdP listens on its pod address). */
  listenAddress?: string;
  issuer: string;
  stateDir: string;
  accountsFile: string;
  clients: EmbeddedIamClient[];
  logger: Logger;
  /**
   * Accounts created in Ring0 (the `iam_accounts` table). Default: the process's database when one
   * is configured, else none (seed accounts only).
   */
  storedAccounts?: StoredAccountSource | null;
}

export interface EmbeddedIam {
  issuer: string;
  close(): Promise<void>;
}

function originsOf(urls: string[]): string[] {
  return [...new Set(urls.map((url) => new URL(url).origin))];
}

/** Starts the embedded IAM; resolves once it listens on 127.0.0.1:port (or listenAddress). */
export async function startEmbeddedIam(opts: StartEmbeddedIamOptions): Promise<EmbeddedIam> {
  const logger = opts.logger.child({ component: "iam" });
  const issuerUrl = new URL(opts.issuer);
  if (issuerUrl.pathname !== "/" || issuerUrl.search || issuerUrl.hash) {
    throw new Error(`embedded IAM issuer must be an origin without a path (got ${opts.issuer})`);
  }
  const issuer = issuerUrl.origin;
  if (opts.clients.length === 0) throw new Error("embedded IAM needs at least one client");

  await mkdir(opts.stateDir, { recursive: true, mode: 0o700 });
  const entries = await readAccountsFile(opts.accountsFile);
  // The start banner prints the seed file's demo logins; the log never carries passwords.
  const demoLogins = entries.filter((entry) => entry.password !== undefined).length;
  const accounts: AccountStore = await createAccountStore(entries);
  entries.length = 0;
  const storedAccounts =
    opts.storedAccounts === undefined
      ? getDatabaseUrl()
        ? createIamAccountRepository(getDb())
        : undefined
      : (opts.storedAccounts ?? undefined);
  const directory = createAccountDirectory(accounts, storedAccounts);

  const jwks = await loadSigningKeys(opts.stateDir, logger);
  const cookieKeys = await loadCookieKeys(opts.stateDir, logger);
  const store = await openFileStore(opts.stateDir, logger);
  const clockTolerance = 15;

  const formOrigins = originsOf(
    opts.clients.flatMap((client) => [...client.redirectUris, ...client.postLogoutRedirectUris]),
  )
    .filter((origin) => origin !== issuer)
    .map((origin) => ` ${origin}`)
    .join("");
  const throttle = createLoginThrottle();
  const pages = createPages(formOrigins);

  const provider = new Provider(
    issuer,
    providerConfiguration({
      clients: opts.clients,
      directory,
      adapter: store.adapterFactory(clockTolerance),
      clockTolerance,
      jwks,
      cookieKeys,
      pages,
    }),
  );
  // Behind a TLS terminator (https issuer) trust X-Forwarded-*; plain http on localhost needs nothing.
  provider.proxy = issuerUrl.protocol === "https:";

  provider.on("server_error", (ctx, error) => logger.error("iam server error", { path: ctx.path, error }));
  const requestErrors = [
    "authorization.error",
    "grant.error",
    "end_session.error",
    "userinfo.error",
    "revocation.error",
    "discovery.error",
    "jwks.error",
  ] as const;
  for (const event of requestErrors) {
    (
      provider.on as (
        name: string,
        listener: (ctx: KoaContextWithOIDC, error: errors.OIDCProviderError) => void,
      ) => void
    )(event, (ctx, error) =>
      logger.warn("iam request rejected", {
        event,
        path: ctx.path,
        client: ctx.oidc?.client?.clientId,
        error: error.error,
        description: error.error_description,
      }),
    );
  }
  provider.on("end_session.success", (ctx) =>
    logger.info("iam sign-out", { client: ctx.oidc.client?.clientId, sub: ctx.oidc.session?.accountId }),
  );
  // Koa logs uncaught errors to the console unless something listens.
  (provider as unknown as NodeJS.EventEmitter).on("error", (error: unknown) =>
    logger.error("iam unhandled error", { error }),
  );

  const providerCallback = provider.callback();
  const handleInteraction = createInteractionHandler({
    provider,
    issuer,
    issuerUrl,
    directory,
    throttle,
    pages,
    logger,
  });

  const server = http.createServer((req, res) => {
    const pathname = (req.url ?? "/").split("?")[0] ?? "/";
    if (pathname === "/healthz") {
      res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
      res.end("ok\n");
      return;
    }
    const match = interactionRoute.exec(pathname);
    if (!match) {
      void providerCallback(req, res);
      return;
    }
    const [, uid = "", action = ""] = match;
    handleInteraction(req, res, uid, action, pathname);
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`embedded IAM cannot listen on 127.0.0.1:${opts.port}: the port is already in use`)
          : error,
      );
    };
    server.once("error", onError);
    server.listen(opts.port, opts.listenAddress ?? "127.0.0.1", () => {
      server.off("error", onError);
      resolve();
    });
  });
  server.on("error", (error) => logger.error("iam server socket error", { error }));

  registerEmbeddedIam({ issuer, seedAccounts: accounts.list() });
  logger.info("embedded IAM listening", {
    issuer,
    address: `${opts.listenAddress ?? "127.0.0.1"}:${opts.port}`,
    accounts: accounts.size,
    clients: opts.clients.map((client) => client.clientId),
  });
  if (demoLogins > 0) {
    logger.warn("embedded IAM has demo accounts with seeded passwords; do not use it in production", {
      accounts: demoLogins,
    });
  }

  let closing: Promise<void> | undefined;
  return {
    issuer,
    close() {
      closing ??= (async () => {
        registerEmbeddedIam(null);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await store.flush();
        logger.info("embedded IAM stopped", { issuer });
      })();
      return closing;
    },
  };
}
