/**
 * Ring0's embedded identity provider: an oidc-provider instance on 127.0.0.1 that Ring0 starts
 * when no external issuer is configured. It owns its login page (no dev interactions), grants
 * consent implicitly for the configured first-party clients, puts tenant and roles in the ID token,
 * logs out without a confirmation page when the RP sends a valid id_token_hint, and keeps its keys
 * and stateful artifacts (sessions, grants, tokens) in `stateDir` so a restart changes nothing.
 */
import { generateKeyPair, hash, randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import Provider, {
  type Account,
  type Adapter,
  type AdapterPayload,
  type Configuration,
  errors,
  type Interaction,
  interactionPolicy,
  type JWKS,
  type KoaContextWithOIDC,
} from "oidc-provider";
import { getDatabaseUrl, getDb } from "@/server/db/client";
import type { Logger } from "@/server/logger";
import { createIamAccountRepository } from "./account-repository";
import {
  type AccountStore,
  createAccountDirectory,
  createAccountStore,
  normaliseUsername,
  readAccountsFile,
  type StoredAccountSource,
} from "./accounts";
import { registerEmbeddedIam } from "./registry";

export interface EmbeddedIamClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
}

export interface StartEmbeddedIamOptions {
  port: number;
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

export const IAM_SCOPES = ["openid", "profile", "email", "ring0"] as const;

const SECONDS = { minute: 60, hour: 60 * 60 } as const;
const MAX_FORM_BYTES = 8 * 1024;
const STORE_FILE = "oidc-store.json";
const JWKS_FILE = "jwks.json";
const COOKIE_KEYS_FILE = "cookie-keys.json";

// ---------------------------------------------------------------------------------------------
// State directory: keys and artifacts, files mode 0600.

async function writePrivateFile(file: string, content: string, flag: "w" | "wx" = "w"): Promise<void> {
  await writeFile(file, content, { mode: 0o600, flag });
  await chmod(file, 0o600);
}

/** Reads a JSON state file, creating it with `create()` on first start; tightens loose permissions. */
async function loadOrCreateState<T>(
  file: string,
  create: () => Promise<T>,
  valid: (value: unknown) => value is T,
  logger: Logger,
): Promise<T> {
  try {
    const info = await stat(file);
    if ((info.mode & 0o077) !== 0) {
      logger.warn("embedded IAM state file was readable by others; restricting it to mode 0600", { file });
      await chmod(file, 0o600);
    }
    const value: unknown = JSON.parse(await readFile(file, "utf8"));
    if (!valid(value)) throw new Error(`${file} is not in the expected format; delete it to regenerate`);
    return value;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const value = await create();
  try {
    await writePrivateFile(file, `${JSON.stringify(value, null, 2)}\n`, "wx");
  } catch (error) {
    // Another process created it first: use theirs so both agree.
    if ((error as NodeJS.ErrnoException).code === "EEXIST")
      return loadOrCreateState(file, create, valid, logger);
    throw error;
  }
  logger.info("embedded IAM generated new state", { file: path.basename(file) });
  return value;
}

async function createSigningKeys(): Promise<JWKS> {
  const { privateKey } = await new Promise<{ privateKey: import("node:crypto").KeyObject }>(
    (resolve, reject) => {
      generateKeyPair("rsa", { modulusLength: 2048 }, (error, _publicKey, key) =>
        error ? reject(error) : resolve({ privateKey: key }),
      );
    },
  );
  const jwk = privateKey.export({ format: "jwk" });
  const kid = hash("sha256", JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n }), "base64url");
  return { keys: [{ ...jwk, kid, alg: "RS256", use: "sig" }] } as JWKS;
}

function isJwks(value: unknown): value is JWKS {
  const keys = (value as { keys?: unknown })?.keys;
  return Array.isArray(keys) && keys.length > 0 && keys.every((key) => typeof key?.kty === "string" && key.d);
}

function isCookieKeys(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((key) => typeof key === "string" && key.length >= 32)
  );
}

// ---------------------------------------------------------------------------------------------
// Adapter: an in-memory store written through to one JSON file (atomic rename, mode 0600).

interface StoredEntry {
  payload: AdapterPayload;
  /** Epoch milliseconds; absent means no expiry. */
  expiresAt?: number;
}

const grantableModels = new Set([
  "AccessToken",
  "AuthorizationCode",
  "RefreshToken",
  "DeviceCode",
  "BackchannelAuthenticationRequest",
  "PreAuthorizedCode",
]);

class FileStore {
  private readonly entries = new Map<string, StoredEntry>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly file: string,
    private readonly logger: Logger,
  ) {}

  static async open(file: string, logger: Logger): Promise<FileStore> {
    const store = new FileStore(file, logger);
    try {
      const info = await stat(file);
      if ((info.mode & 0o077) !== 0) await chmod(file, 0o600);
      const data = JSON.parse(await readFile(file, "utf8")) as { entries?: [string, StoredEntry][] };
      const now = Date.now();
      for (const [key, entry] of data.entries ?? []) {
        if (entry?.payload && (entry.expiresAt === undefined || entry.expiresAt > now))
          store.entries.set(key, entry);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        logger.warn("embedded IAM could not read its session store; starting with an empty one", {
          file,
          error,
        });
      }
    }
    return store;
  }

  get(key: string): AdapterPayload | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      this.delete(key);
      return undefined;
    }
    return structuredClone(entry.payload);
  }

  set(key: string, payload: AdapterPayload, expiresAt?: number): void {
    this.entries.set(key, { payload: structuredClone(payload), expiresAt });
    this.schedule();
  }

  update(key: string, change: (payload: AdapterPayload) => void): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    change(entry.payload);
    this.schedule();
  }

  delete(key: string): void {
    if (this.entries.delete(key)) this.schedule();
  }

  *scan(prefix: string): Generator<[string, AdapterPayload]> {
    const now = Date.now();
    for (const [key, entry] of this.entries) {
      if (!key.startsWith(prefix)) continue;
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) continue;
      yield [key, entry.payload];
    }
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, 20);
    this.timer.unref();
  }

  /** Writes the current state; writes are serialised and each one is atomic. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.writing = this.writing.then(async () => {
      const now = Date.now();
      const entries = [...this.entries].filter(
        ([, entry]) => entry.expiresAt === undefined || entry.expiresAt > now,
      );
      const temporary = `${this.file}.${process.pid}.tmp`;
      try {
        await writePrivateFile(temporary, JSON.stringify({ version: 1, entries }));
        await rename(temporary, this.file);
      } catch (error) {
        this.logger.error("embedded IAM could not persist its session store", { file: this.file, error });
      }
    });
    return this.writing;
  }

  adapterFactory(clockToleranceSeconds: number): (model: string) => Adapter {
    return (model) => {
      const key = (id: string) => `${model}:${id}`;
      const findBy = (field: "uid" | "userCode", value: string) => {
        for (const [, payload] of this.scan(`${model}:`)) {
          if (payload[field] === value) return structuredClone(payload);
        }
        return undefined;
      };
      return {
        upsert: async (id, payload, expiresIn) => {
          const expiresAt =
            typeof expiresIn === "number"
              ? Date.now() + (expiresIn + clockToleranceSeconds) * 1000
              : undefined;
          this.set(key(id), payload, expiresAt);
        },
        find: async (id) => this.get(key(id)),
        findByUid: async (uid) => findBy("uid", uid),
        findByUserCode: async (userCode) => findBy("userCode", userCode),
        consume: async (id) => {
          this.update(key(id), (payload) => {
            payload.consumed = Math.floor(Date.now() / 1000);
          });
        },
        destroy: async (id) => this.delete(key(id)),
        revokeByGrantId: async (grantId) => {
          for (const grantable of grantableModels) {
            for (const [entryKey, payload] of [...this.scan(`${grantable}:`)]) {
              if (payload.grantId === grantId) this.delete(entryKey);
            }
          }
        },
      };
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Throttling of repeated sign-in failures per username.

export interface LoginThrottleOptions {
  /** Failures within `windowMs` before the username is locked. */
  maxFailures: number;
  windowMs: number;
  /** First lock length; doubles with each further failure, up to `maxLockMs`. */
  baseLockMs: number;
  maxLockMs: number;
  maxEntries: number;
}

export interface LoginThrottle {
  /** Seconds to wait, or 0 when an attempt is allowed now. */
  retryAfter(username: string): number;
  failed(username: string): void;
  succeeded(username: string): void;
}

export function createLoginThrottle(
  options: Partial<LoginThrottleOptions> = {},
  now: () => number = Date.now,
): LoginThrottle {
  const settings: LoginThrottleOptions = {
    maxFailures: 5,
    windowMs: 15 * 60_000,
    baseLockMs: 30_000,
    maxLockMs: 15 * 60_000,
    maxEntries: 10_000,
    ...options,
  };
  const state = new Map<string, { failures: number; firstAt: number; lockedUntil: number }>();
  const prune = () => {
    const at = now();
    for (const [key, entry] of state) {
      if (entry.lockedUntil <= at && at - entry.firstAt > settings.windowMs) state.delete(key);
    }
    // Still full (a spray of distinct usernames): drop the oldest records.
    for (const key of state.keys()) {
      if (state.size < settings.maxEntries) break;
      state.delete(key);
    }
  };
  return {
    retryAfter(username) {
      const entry = state.get(normaliseUsername(username));
      if (!entry) return 0;
      const wait = entry.lockedUntil - now();
      return wait > 0 ? Math.ceil(wait / 1000) : 0;
    },
    failed(username) {
      const key = normaliseUsername(username);
      const at = now();
      let entry = state.get(key);
      if (!entry || (at - entry.firstAt > settings.windowMs && entry.lockedUntil <= at)) {
        if (state.size >= settings.maxEntries) prune();
        entry = { failures: 0, firstAt: at, lockedUntil: 0 };
        state.set(key, entry);
      }
      entry.failures += 1;
      if (entry.failures >= settings.maxFailures) {
        const lock = settings.baseLockMs * 2 ** (entry.failures - settings.maxFailures);
        entry.lockedUntil = at + Math.min(lock, settings.maxLockMs);
        entry.firstAt = at;
      }
    },
    succeeded(username) {
      state.delete(normaliseUsername(username));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Pages: server-rendered, no external assets, strict CSP with a per-response nonce.

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[char] ?? char,
  );
}

const stylesheet = `
:root{color-scheme:light dark;--bg:#f4f5f7;--card:#fff;--fg:#16181d;--muted:#5b6270;--border:#d0d4dc;--accent:#2451d6;--accent-fg:#fff;--danger-bg:#fdecec;--danger-fg:#9b1c1c;--focus:#2451d6}
@media (prefers-color-scheme:dark){:root{--bg:#0f1115;--card:#181b21;--fg:#e8eaef;--muted:#a2a9b6;--border:#343a46;--accent:#7f9cff;--accent-fg:#0f1115;--danger-bg:#3a1717;--danger-fg:#ffb4b4;--focus:#7f9cff}}
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:grid;place-items:center;padding:1.5rem;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{width:100%;max-width:24rem;background:var(--card);border:1px solid var(--border);border-radius:12px;padding:2rem}
h1{font-size:1.4rem;margin:0 0 1.25rem}
p{margin:0 0 1rem;color:var(--muted)}
.field{display:grid;gap:.35rem;margin-bottom:1rem}
label{font-weight:600;font-size:.95rem}
input{font:inherit;padding:.6rem .7rem;border:1px solid var(--border);border-radius:8px;background:transparent;color:inherit;width:100%}
input:focus-visible,button:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
button{font:inherit;font-weight:600;width:100%;padding:.65rem;border:0;border-radius:8px;background:var(--accent);color:var(--accent-fg);cursor:pointer}
button.secondary{background:transparent;color:var(--fg);border:1px solid var(--border);margin-top:.6rem}
.alert{background:var(--danger-bg);color:var(--danger-fg);border-radius:8px;padding:.6rem .8rem;margin-bottom:1rem}
`;

interface PageOptions {
  title: string;
  body: string;
  nonce: string;
  script?: string;
}

function renderPage({ title, body, nonce, script }: PageOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${stylesheet}</style>
</head>
<body>
<main>
${body}
</main>${script ? `\n<script nonce="${nonce}">${script}</script>` : ""}
</body>
</html>
`;
}

function securityHeaders(nonce: string, formOrigins: string, withScript: boolean): Record<string, string> {
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    withScript ? `script-src 'nonce-${nonce}'` : "script-src 'none'",
    // Chrome applies form-action to the redirects that follow a submission, so the RPs' origins
    // must be allowed too (login → /auth → redirect_uri, logout → post_logout_redirect_uri).
    `form-action 'self'${formOrigins}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
  return {
    "Content-Security-Policy": csp,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-store",
    Pragma: "no-cache",
  };
}

const newNonce = () => randomBytes(16).toString("base64url");

function loginBody(uid: string, username: string, alert: string | undefined): string {
  const alertHtml = alert ? `<div class="alert" role="alert">${escapeHtml(alert)}</div>\n` : "";
  const invalid = alert ? ' aria-invalid="true" aria-describedby="login-error"' : "";
  return `<h1>Sign in to Ring0</h1>
${alertHtml.replace('role="alert"', 'role="alert" id="login-error"')}<form method="post" action="/interaction/${encodeURIComponent(uid)}/login">
<div class="field"><label for="username">Username</label><input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" autocorrect="off" spellcheck="false" maxlength="128" required value="${escapeHtml(username)}"${username ? "" : " autofocus"}${invalid}></div>
<div class="field"><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" maxlength="1024" required${username ? " autofocus" : ""}${invalid}></div>
<button type="submit">Sign in</button>
</form>`;
}

// ---------------------------------------------------------------------------------------------
// Small HTTP helpers for our own routes.

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") throw new HttpError(415, "Unsupported form encoding.");
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  if (declared > MAX_FORM_BYTES) throw new HttpError(413, "The form was too large.");
  const chunks: Buffer[] = [];
  let size = 0;
  // destroyOnReturn: false keeps the socket usable so the 413 page can still be sent.
  for await (const chunk of req.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new HttpError(413, "The form was too large.");
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function field(form: URLSearchParams, name: string, max: number): string {
  const value = form.get(name) ?? "";
  return value.length > max ? value.slice(0, max) : value;
}

function originsOf(urls: string[]): string[] {
  return [...new Set(urls.map((url) => new URL(url).origin))];
}

// ---------------------------------------------------------------------------------------------

/**
 * The default prompts, plus: an IAM session whose account can no longer be found (a database
 * account that was disabled) asks for a login again instead of failing the authorization.
 */
function loginPolicy() {
  const policy = interactionPolicy.base();
  const { Check } = interactionPolicy;
  policy
    .get("login")
    ?.checks.add(
      new Check("account_unavailable", "The signed-in account is no longer available", (ctx) =>
        ctx.oidc.session?.accountId && !ctx.oidc.account ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT,
      ),
      0,
    );
  return policy;
}

/** Starts the embedded IAM; resolves once it listens on 127.0.0.1:port. */
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

  const jwks = await loadOrCreateState(
    path.join(opts.stateDir, JWKS_FILE),
    createSigningKeys,
    isJwks,
    logger,
  );
  const cookieKeys = await loadOrCreateState(
    path.join(opts.stateDir, COOKIE_KEYS_FILE),
    async () => [randomBytes(32).toString("base64url")],
    isCookieKeys,
    logger,
  );
  const store = await FileStore.open(path.join(opts.stateDir, STORE_FILE), logger);
  const clockTolerance = 15;

  const formOrigins = originsOf(
    opts.clients.flatMap((client) => [...client.redirectUris, ...client.postLogoutRedirectUris]),
  )
    .filter((origin) => origin !== issuer)
    .map((origin) => ` ${origin}`)
    .join("");
  const throttle = createLoginThrottle();

  // Disabled database accounts are not found, so their IAM sessions stop yielding tokens too.
  const findAccount = async (_ctx: KoaContextWithOIDC, sub: string): Promise<Account | undefined> => {
    const account = await directory.findBySub(sub);
    if (!account) return undefined;
    return {
      accountId: account.sub,
      claims: () => ({
        sub: account.sub,
        name: account.name,
        preferred_username: account.username,
        email: account.email,
        tenant: account.tenant,
        roles: [...account.roles],
      }),
    };
  };

  const sendCtxPage = (ctx: KoaContextWithOIDC, page: PageOptions) => {
    for (const [name, value] of Object.entries(
      securityHeaders(page.nonce, formOrigins, Boolean(page.script)),
    )) {
      ctx.set(name, value);
    }
    ctx.type = "html";
    ctx.body = renderPage(page);
  };

  const configuration: Configuration = {
    adapter: store.adapterFactory(clockTolerance),
    clockTolerance,
    clients: opts.clients.map((client) => ({
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uris: client.redirectUris,
      post_logout_redirect_uris: client.postLogoutRedirectUris,
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      id_token_signed_response_alg: "RS256",
    })),
    // client_secret_basic and client_secret_post are interchangeable for a registered secret client.
    clientAuthMethods: ["client_secret_basic", "client_secret_post"],
    responseTypes: ["code"],
    scopes: [...IAM_SCOPES],
    claims: {
      acr: null,
      auth_time: null,
      iss: null,
      sid: null,
      openid: ["sub"],
      profile: ["name", "preferred_username"],
      email: ["email"],
      ring0: ["tenant", "roles"],
    },
    // The RP reads tenant and roles straight from the ID token.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    findAccount,
    // Consent is implicit for our first-party clients: grant whatever OIDC scopes/claims they ask for.
    async loadExistingGrant(ctx) {
      const { oidc } = ctx;
      const client = oidc.client;
      const accountId = oidc.session?.accountId;
      if (!client || !accountId) return undefined;
      const grantId = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(client.clientId);
      let grant = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
      if (grant && (grant.accountId !== accountId || grant.clientId !== client.clientId)) grant = undefined;
      grant ??= new oidc.provider.Grant({ accountId, clientId: client.clientId });
      grant.addOIDCScope(oidc.requestParamOIDCScopes);
      if (oidc.requestParamClaims.size) grant.addOIDCClaims(oidc.requestParamClaims);
      await grant.save();
      return grant;
    },
    jwks,
    cookies: {
      keys: cookieKeys,
      // Cookies ignore ports: distinct names keep ours apart from Ring0's and other localhost apps'.
      names: {
        session: "ring0_iam_session",
        interaction: "ring0_iam_interaction",
        resume: "ring0_iam_resume",
      },
      long: { httpOnly: true, sameSite: "lax" },
      short: { httpOnly: true, sameSite: "lax" },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}`, policy: loginPolicy() },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: { enabled: false },
      userinfo: { enabled: true },
      revocation: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        async logoutSource(ctx, form) {
          const hint = ctx.oidc.entities.IdTokenHint;
          const accountId = ctx.oidc.session?.accountId;
          // end_session has already verified the hint's signature, audience and the post-logout URI.
          const confirmed = hint !== undefined && accountId !== undefined && hint.payload.sub === accountId;
          const nonce = newNonce();
          if (confirmed) {
            const autoForm = form.replace(
              "</form>",
              '<input type="hidden" name="logout" value="yes"/></form>',
            );
            sendCtxPage(ctx, {
              title: "Signing out of Ring0",
              nonce,
              body: `<h1>Signing out of Ring0…</h1>
${autoForm}
<noscript><p>JavaScript is off; finish signing out with the button below.</p></noscript>
<button type="submit" form="op.logoutForm">Continue signing out</button>`,
              script: `document.getElementById("op.logoutForm").submit();`,
            });
            return;
          }
          sendCtxPage(ctx, {
            title: "Sign out of Ring0",
            nonce,
            body: `<h1>Sign out of Ring0?</h1>
${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>Sign out</button>
<button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>`,
          });
        },
        async postLogoutSuccessSource(ctx) {
          sendCtxPage(ctx, {
            title: "Signed out",
            nonce: newNonce(),
            body: "<h1>You are signed out</h1>\n<p>You can close this window or return to Ring0.</p>",
          });
        },
      },
    },
    async renderError(ctx, out) {
      const description = typeof out.error_description === "string" ? out.error_description : "";
      sendCtxPage(ctx, {
        title: "Sign-in problem",
        nonce: newNonce(),
        body: `<h1>Something went wrong</h1>
<div class="alert" role="alert">${escapeHtml(out.error)}${description ? `: ${escapeHtml(description)}` : ""}</div>
<p>Return to Ring0 and try again.</p>`,
      });
    },
    clientBasedCORS: () => false,
    ttl: {
      AccessToken: SECONDS.hour,
      AuthorizationCode: SECONDS.minute,
      IdToken: SECONDS.hour,
      Interaction: 30 * SECONDS.minute,
      Session: 12 * SECONDS.hour,
      Grant: 12 * SECONDS.hour,
      RefreshToken: 12 * SECONDS.hour,
    },
  };

  const provider = new Provider(issuer, configuration);
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

  const sendPage = (
    res: http.ServerResponse,
    status: number,
    page: PageOptions,
    extra: Record<string, string> = {},
  ) => {
    const body = renderPage(page);
    res.writeHead(status, {
      ...securityHeaders(page.nonce, formOrigins, Boolean(page.script)),
      "Content-Type": "text/html; charset=utf-8",
      "Content-Length": Buffer.byteLength(body),
      ...extra,
    });
    res.end(body);
  };

  const sendMessage = (res: http.ServerResponse, status: number, message: string) =>
    sendPage(res, status, {
      title: "Sign in to Ring0",
      nonce: newNonce(),
      body: `<h1>Sign in to Ring0</h1>\n<div class="alert" role="alert">${escapeHtml(message)}</div>\n<p>Return to Ring0 and start signing in again.</p>`,
    });

  const sendLogin = (
    res: http.ServerResponse,
    status: number,
    uid: string,
    username: string,
    alert?: string,
    extra?: Record<string, string>,
  ) =>
    sendPage(
      res,
      status,
      { title: "Sign in to Ring0", nonce: newNonce(), body: loginBody(uid, username, alert) },
      extra,
    );

  /** Grants the missing consent programmatically (first-party clients never see a consent page). */
  const finishConsent = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    interaction: Interaction,
  ) => {
    const { prompt, params, session } = interaction;
    const clientId = String(params.client_id);
    const accountId = session?.accountId;
    if (!accountId) throw new HttpError(400, "Your sign-in request is no longer valid.");
    const existing = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
    const grant = existing ?? new provider.Grant({ accountId, clientId });
    const details = prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(" "));
    if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  };

  const loadInteraction = async (req: http.IncomingMessage, res: http.ServerResponse, uid: string) => {
    const interaction = await provider.interactionDetails(req, res);
    if (interaction.uid !== uid) throw new errors.SessionNotFound("interaction uid mismatch");
    return interaction;
  };

  const handleInteraction = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    uid: string,
    action: string,
  ) => {
    if (action === "") {
      if (req.method !== "GET" && req.method !== "HEAD") throw new HttpError(405, "Method not allowed.");
      const interaction = await loadInteraction(req, res, uid);
      if (interaction.prompt.name === "consent") return finishConsent(req, res, interaction);
      if (interaction.prompt.name !== "login")
        throw new HttpError(400, "This sign-in step is not supported.");
      const hint = typeof interaction.params.login_hint === "string" ? interaction.params.login_hint : "";
      return sendLogin(res, 200, uid, hint.slice(0, 128));
    }

    if (req.method !== "POST") throw new HttpError(405, "Method not allowed.");
    const origin = req.headers.origin;
    if (
      origin &&
      origin !== "null" &&
      origin !== issuer &&
      origin !== `${issuerUrl.protocol}//${req.headers.host}`
    ) {
      throw new HttpError(403, "This sign-in form was submitted from another site.");
    }
    const form = await readForm(req);
    const interaction = await loadInteraction(req, res, uid);
    if (interaction.prompt.name !== "login") throw new HttpError(400, "This sign-in step is not supported.");

    const username = normaliseUsername(field(form, "username", 128));
    const password = field(form, "password", 1024);
    const client = String(interaction.params.client_id ?? "");

    const wait = throttle.retryAfter(username);
    if (wait > 0) {
      logger.warn("iam sign-in throttled", { username, client, retryAfterSeconds: wait });
      return sendLogin(
        res,
        429,
        uid,
        username,
        "Too many failed sign-in attempts. Wait a few minutes and try again.",
        {
          "Retry-After": String(wait),
        },
      );
    }

    const result =
      username && password
        ? await directory.authenticate(username, password)
        : ({ ok: false, reason: "invalid" } as const);
    if (!result.ok) {
      if (username) throttle.failed(username);
      logger.warn("iam sign-in failed", { username, client, reason: result.reason });
      if (result.reason === "disabled") {
        return sendLogin(
          res,
          403,
          uid,
          username,
          "This account is disabled. Ask an admin of your tenant to enable it again.",
        );
      }
      if (result.reason === "ambiguous") {
        return sendLogin(
          res,
          401,
          uid,
          username,
          "This username exists in more than one tenant: sign in as <tenant>:<username>, e.g. acme:" +
            username.split(":").pop(),
        );
      }
      return sendLogin(res, 401, uid, username, "Invalid username or password.");
    }
    const { account } = result;

    throttle.succeeded(username);
    logger.info("iam sign-in succeeded", {
      username: account.username,
      tenant: account.tenant,
      sub: account.sub,
      client,
    });
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: account.sub, amr: ["pwd"], remember: true } },
      { mergeWithLastSubmission: false },
    );
  };

  const interactionRoute = /^\/interaction\/([A-Za-z0-9_-]{1,128})(?:\/(login))?\/?$/;

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
    handleInteraction(req, res, uid, action).catch((error: unknown) => {
      if (res.headersSent) {
        logger.error("iam interaction failed after responding", { error });
        res.destroy();
        return;
      }
      if (error instanceof errors.SessionNotFound) {
        sendMessage(res, 400, "This sign-in request expired or was already used.");
      } else if (error instanceof HttpError) {
        sendMessage(res, error.status, error.message);
      } else {
        logger.error("iam interaction failed", { error, path: pathname });
        sendMessage(res, 500, "Something went wrong. Try again.");
      }
    });
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
    server.listen(opts.port, "127.0.0.1", () => {
      server.off("error", onError);
      resolve();
    });
  });
  server.on("error", (error) => logger.error("iam server socket error", { error }));

  registerEmbeddedIam({ issuer, seedAccounts: accounts.list() });
  logger.info("embedded IAM listening", {
    issuer,
    address: `127.0.0.1:${opts.port}`,
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
