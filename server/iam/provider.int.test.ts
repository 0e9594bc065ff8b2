import { createHash, createPublicKey, randomBytes, verify } from "node:crypto";
import { mkdtemp, rm, stat } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogFields, Logger } from "@/server/logger";
import { type EmbeddedIam, startEmbeddedIam } from "./provider";

const accountsFile = path.join(import.meta.dirname, "seed-accounts.json");
const client = {
  clientId: "ring0-web",
  clientSecret: "integration-test-secret-0123456789abcdef",
  redirectUris: ["http://localhost:3000/api/auth/callback/ring0-iam"],
  postLogoutRedirectUris: ["http://localhost:3000/signin"],
};

interface LogRecord {
  level: string;
  message: string;
  fields: LogFields;
}

function captureLogger(records: LogRecord[], context: LogFields = {}): Logger {
  const write = (level: string) => (message: string, fields?: LogFields) =>
    records.push({ level, message, fields: { ...context, ...fields } });
  return {
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    child: (fields) => captureLogger(records, { ...context, ...fields }),
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A minimal browser: cookies by name and path, no automatic redirects. */
class Browser {
  private readonly cookies = new Map<string, { name: string; value: string; path: string }>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const cookie = [...this.cookies.values()]
      .filter((entry) => target.pathname.startsWith(entry.path))
      .map((entry) => `${entry.name}=${entry.value}`)
      .join("; ");
    const headers = new Headers(init.headers);
    if (cookie) headers.set("cookie", cookie);
    const response = await fetch(target, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) this.store(line);
    return response;
  }

  private store(line: string) {
    const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
    const index = pair.indexOf("=");
    const name = pair.slice(0, index);
    const value = pair.slice(index + 1);
    let cookiePath = "/";
    let expired = value === "";
    for (const attribute of attributes) {
      const [key = "", attributeValue = ""] = attribute.split("=");
      if (key.toLowerCase() === "path") cookiePath = attributeValue;
      if (key.toLowerCase() === "expires" && Date.parse(attributeValue) <= Date.now()) expired = true;
      if (key.toLowerCase() === "max-age" && Number(attributeValue) <= 0) expired = true;
    }
    const key = `${cookiePath}|${name}`;
    if (expired) this.cookies.delete(key);
    else this.cookies.set(key, { name, value, path: cookiePath });
  }

  names(): string[] {
    return [...this.cookies.values()].map((entry) => entry.name);
  }
}

const b64url = (buffer: Buffer) => buffer.toString("base64url");

function pkce() {
  const verifier = b64url(randomBytes(32));
  return { verifier, challenge: b64url(createHash("sha256").update(verifier).digest()) };
}

function location(response: Response): string {
  const value = response.headers.get("location");
  expect(value, `expected a redirect, got ${response.status}`).toBeTruthy();
  return value as string;
}

function decodeJwt(jwt: string) {
  const [header = "", payload = "", signature = ""] = jwt.split(".");
  return {
    header: JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>,
    signingInput: `${header}.${payload}`,
    signature: Buffer.from(signature, "base64url"),
  };
}

function unescapeHtml(value: string): string {
  return value
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
}

function parseForm(html: string, id: string) {
  const form = new RegExp(
    `<form id="${id.replace(".", "\\.")}"[^>]*action="([^"]+)"[^>]*>([\\s\\S]*?)</form>`,
  ).exec(html);
  expect(form, "form not found").toBeTruthy();
  const fields = new URLSearchParams();
  for (const input of (form?.[2] ?? "").matchAll(
    /<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g,
  )) {
    fields.append(input[1] ?? "", unescapeHtml(input[2] ?? ""));
  }
  return { action: unescapeHtml(form?.[1] ?? ""), fields };
}

describe("embedded IAM", () => {
  const records: LogRecord[] = [];
  let stateDir: string;
  let port: number;
  let issuer: string;
  let iam: EmbeddedIam;

  const start = async () =>
    startEmbeddedIam({
      port,
      issuer,
      stateDir,
      accountsFile,
      clients: [client],
      logger: captureLogger(records),
    });

  beforeAll(async () => {
    stateDir = await mkdtemp(path.join(os.tmpdir(), "ring0-iam-"));
    port = await freePort();
    issuer = `http://localhost:${port}`;
    iam = await start();
  }, 30_000);

  afterAll(async () => {
    await iam?.close();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  });

  /** authorize → login page; returns the interaction URL. */
  async function beginAuthorization(browser: Browser, extra: Record<string, string> = {}) {
    const { verifier, challenge } = pkce();
    const state = b64url(randomBytes(12));
    const nonce = b64url(randomBytes(12));
    const authorize = new URL("/auth", issuer);
    authorize.search = new URLSearchParams({
      client_id: client.clientId,
      redirect_uri: client.redirectUris[0] ?? "",
      response_type: "code",
      scope: "openid profile email ring0",
      state,
      nonce,
      code_challenge: challenge,
      code_challenge_method: "S256",
      ...extra,
    }).toString();
    const response = await browser.fetch(authorize.href);
    return { response, verifier, state, nonce };
  }

  async function submitLogin(browser: Browser, interactionUrl: string, username: string, password: string) {
    return browser.fetch(`${interactionUrl}/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: issuer },
      body: new URLSearchParams({ username, password }).toString(),
    });
  }

  /** Follows redirects on the IAM until one leaves it (to the client). */
  async function followToClient(browser: Browser, response: Response): Promise<URL> {
    let current = response;
    for (let hops = 0; hops < 5; hops++) {
      const next = new URL(location(current), issuer);
      if (next.origin !== issuer) return next;
      current = await browser.fetch(next.href);
    }
    throw new Error("too many redirects");
  }

  async function exchangeCode(code: string, verifier: string, method: "basic" | "post") {
    const body = new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: client.redirectUris[0] ?? "",
      code_verifier: verifier,
    });
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
    if (method === "basic") {
      const credentials = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(credentials).toString("base64")}`;
    } else {
      body.set("client_id", client.clientId);
      body.set("client_secret", client.clientSecret);
    }
    const response = await fetch(new URL("/token", issuer), {
      method: "POST",
      headers,
      body: body.toString(),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as { id_token: string; access_token: string; token_type: string };
  }

  async function verifyIdToken(idToken: string) {
    const { header, payload, signingInput, signature } = decodeJwt(idToken);
    expect(header.alg).toBe("RS256");
    const jwks = (await (await fetch(new URL("/jwks", issuer))).json()) as { keys: Array<{ kid: string }> };
    const jwk = jwks.keys.find((key) => key.kid === header.kid);
    expect(jwk).toBeDefined();
    const key = createPublicKey({ key: jwk as never, format: "jwk" });
    expect(verify("sha256", Buffer.from(signingInput), key, signature)).toBe(true);
    return payload;
  }

  let idToken = "";
  let sessionBrowser: Browser;

  it("publishes discovery metadata with the Ring0 scopes and claims", async () => {
    const response = await fetch(new URL("/.well-known/openid-configuration", issuer));
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(issuer);
    expect(metadata.authorization_endpoint).toBe(`${issuer}/auth`);
    expect(metadata.token_endpoint).toBe(`${issuer}/token`);
    expect(metadata.userinfo_endpoint).toBe(`${issuer}/me`);
    expect(metadata.end_session_endpoint).toBe(`${issuer}/session/end`);
    expect(metadata.scopes_supported).toEqual(
      expect.arrayContaining(["openid", "profile", "email", "ring0"]),
    );
    expect(metadata.claims_supported).toEqual(
      expect.arrayContaining(["sub", "name", "preferred_username", "email", "tenant", "roles"]),
    );
    expect(metadata.code_challenge_methods_supported).toEqual(["S256"]);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(["client_secret_basic", "client_secret_post"]),
    );
  });

  it("stores keys with mode 0600", async () => {
    for (const file of ["jwks.json", "cookie-keys.json"]) {
      const info = await stat(path.join(stateDir, file));
      expect(info.mode & 0o777).toBe(0o600);
    }
  });

  it("runs the authorization-code flow with PKCE for acme-admin", async () => {
    const browser = new Browser();
    const { response, verifier, state, nonce } = await beginAuthorization(browser);
    expect(response.status).toBe(303);
    const interactionUrl = new URL(location(response), issuer).href;
    expect(interactionUrl).toMatch(new RegExp(`^${issuer}/interaction/[A-Za-z0-9_-]+$`));

    const page = await browser.fetch(interactionUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("cache-control")).toBe("no-store");
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("http://localhost:3000");
    const html = await page.text();
    expect(html).toContain("<h1>Sign in to Ring0</h1>");
    expect(html).toMatch(/<form method="post" action="\/interaction\/[A-Za-z0-9_-]+\/login">/);
    expect(html).toContain('<label for="username">Username</label>');
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toMatch(/<button type="submit">Sign in<\/button>/);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).toContain("prefers-color-scheme:dark");

    const wrongPassword = await submitLogin(browser, interactionUrl, "acme-admin", "not-the-password");
    expect(wrongPassword.status).toBe(401);
    const wrongHtml = await wrongPassword.text();
    expect(wrongHtml).toMatch(/role="alert"[^>]*>Invalid username or password\.</);
    expect(wrongHtml).toContain('value="acme-admin"');

    const unknownUser = await submitLogin(browser, interactionUrl, "nobody-here", "ring0-demo");
    expect(unknownUser.status).toBe(401);
    const unknownHtml = await unknownUser.text();
    expect(unknownHtml).toMatch(/role="alert"[^>]*>Invalid username or password\.</);
    expect(unknownHtml).toContain('value="nobody-here"');

    const login = await submitLogin(browser, interactionUrl, "acme-admin", "ring0-demo");
    expect(login.status).toBe(303);
    const callback = await followToClient(browser, login);
    expect(`${callback.origin}${callback.pathname}`).toBe(client.redirectUris[0]);
    expect(callback.searchParams.get("state")).toBe(state);
    expect(callback.searchParams.get("iss")).toBe(issuer);
    const code = callback.searchParams.get("code");
    expect(code).toBeTruthy();

    const tokens = await exchangeCode(code ?? "", verifier, "basic");
    expect(tokens.token_type).toBe("Bearer");
    const claims = await verifyIdToken(tokens.id_token);
    expect(claims).toMatchObject({
      iss: issuer,
      aud: client.clientId,
      sub: "acme:acme-admin",
      nonce,
      name: "Alice Admin (Acme)",
      preferred_username: "acme-admin",
      email: "alice@acme.example",
      tenant: "acme",
      roles: ["tenant-admin"],
    });

    const userinfo = await fetch(new URL("/me", issuer), {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(200);
    expect(await userinfo.json()).toEqual({
      sub: "acme:acme-admin",
      name: "Alice Admin (Acme)",
      preferred_username: "acme-admin",
      email: "alice@acme.example",
      tenant: "acme",
      roles: ["tenant-admin"],
    });

    idToken = tokens.id_token;
    sessionBrowser = browser;
    expect(browser.names()).toContain("ring0_iam_session");

    const logged = records.filter((record) => record.message.startsWith("iam sign-in"));
    expect(logged.map((record) => record.message)).toEqual([
      "iam sign-in failed",
      "iam sign-in failed",
      "iam sign-in succeeded",
    ]);
    expect(logged[2]?.fields).toMatchObject({ username: "acme-admin", tenant: "acme" });
    expect(JSON.stringify(logged)).not.toContain("not-the-password");
  });

  it("keeps keys and sessions across a restart (SSO without a new login)", async () => {
    const before = await (await fetch(new URL("/jwks", issuer))).json();
    await iam.close();
    iam = await start();
    expect(await (await fetch(new URL("/jwks", issuer))).json()).toEqual(before);
    await verifyIdToken(idToken);

    const { response, verifier } = await beginAuthorization(sessionBrowser);
    const callback = await followToClient(sessionBrowser, response);
    expect(callback.pathname).toBe(new URL(client.redirectUris[0] ?? "").pathname);
    const tokens = await exchangeCode(callback.searchParams.get("code") ?? "", verifier, "post");
    const claims = decodeJwt(tokens.id_token).payload;
    expect(claims).toMatchObject({ sub: "acme:acme-admin", tenant: "acme" });
    idToken = tokens.id_token;
  }, 30_000);

  it("ends the session with id_token_hint without a confirmation page", async () => {
    const endSession = new URL("/session/end", issuer);
    endSession.search = new URLSearchParams({
      id_token_hint: idToken,
      post_logout_redirect_uri: client.postLogoutRedirectUris[0] ?? "",
      state: "bye",
    }).toString();
    const page = await sessionBrowser.fetch(endSession.href);
    expect(page.status).toBe(200);
    const html = await page.text();
    // No choice offered: the form submits itself (a nonce'd inline script allowed by the CSP).
    expect(html).not.toContain("Stay signed in");
    const csp = page.headers.get("content-security-policy") ?? "";
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(html).toContain(
      `<script nonce="${nonce}">document.getElementById("op.logoutForm").submit();</script>`,
    );

    // What the browser's auto-submit does:
    const { action, fields } = parseForm(html, "op.logoutForm");
    expect(fields.get("logout")).toBe("yes");
    const confirm = await sessionBrowser.fetch(new URL(action, issuer).href, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: issuer },
      body: fields.toString(),
    });
    expect(confirm.status).toBe(303);
    expect(location(confirm)).toBe(`${client.postLogoutRedirectUris[0]}?state=bye`);
    expect(sessionBrowser.names()).not.toContain("ring0_iam_session");

    // Signed out at the IAM: the next authorization asks for the password again.
    const { response } = await beginAuthorization(sessionBrowser);
    expect(location(response)).toMatch(/^\/interaction\//);
  });

  it("signs in the operator with client_secret_post", async () => {
    const browser = new Browser();
    const { response, verifier } = await beginAuthorization(browser);
    const interactionUrl = new URL(location(response), issuer).href;
    const login = await submitLogin(browser, interactionUrl, "Operator", "ring0-demo");
    const callback = await followToClient(browser, login);
    const tokens = await exchangeCode(callback.searchParams.get("code") ?? "", verifier, "post");
    const claims = await verifyIdToken(tokens.id_token);
    expect(claims).toMatchObject({ sub: "system:operator", tenant: "system", roles: ["operator"] });
  });

  it("requires PKCE", async () => {
    const browser = new Browser();
    const authorize = new URL("/auth", issuer);
    authorize.search = new URLSearchParams({
      client_id: client.clientId,
      redirect_uri: client.redirectUris[0] ?? "",
      response_type: "code",
      scope: "openid",
      state: "s",
    }).toString();
    const response = await browser.fetch(authorize.href);
    const callback = new URL(location(response));
    expect(callback.searchParams.get("error")).toBe("invalid_request");
  });

  it("locks a username after repeated failures", async () => {
    const browser = new Browser();
    const { response } = await beginAuthorization(browser);
    const interactionUrl = new URL(location(response), issuer).href;
    for (let attempt = 0; attempt < 5; attempt++) {
      const failed = await submitLogin(browser, interactionUrl, "globex-member", `wrong-${attempt}`);
      expect(failed.status).toBe(401);
    }
    const locked = await submitLogin(browser, interactionUrl, "globex-member", "ring0-demo");
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await locked.text()).toContain('role="alert"');
    // Other usernames are unaffected.
    const other = await submitLogin(browser, interactionUrl, "globex-admin", "ring0-demo");
    expect(other.status).toBe(303);
  });

  it("rejects cross-site and oversized login posts", async () => {
    const browser = new Browser();
    const { response } = await beginAuthorization(browser);
    const interactionUrl = new URL(location(response), issuer).href;
    const crossSite = await browser.fetch(`${interactionUrl}/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://evil.example" },
      body: "username=acme-admin&password=ring0-demo",
    });
    expect(crossSite.status).toBe(403);
    const oversized = await browser.fetch(`${interactionUrl}/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: issuer },
      body: `username=acme-admin&password=${"x".repeat(20_000)}`,
    });
    expect(oversized.status).toBe(413);
    const noCookie = await fetch(`${interactionUrl}/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: issuer },
      body: "username=acme-admin&password=ring0-demo",
    });
    expect(noCookie.status).toBe(400);
  });

  it("never logs passwords", () => {
    const text = JSON.stringify(records.filter((record) => !record.message.includes("demo logins")));
    expect(text).not.toContain("ring0-demo");
    expect(records.filter((record) => record.level === "error")).toEqual([]);
  });
});
