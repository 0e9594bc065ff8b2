/**
 * Embedded-IAM accounts created in Ring0, end to end against real PostgreSQL and the real IAM over
 * HTTP: the temporary password signs in, disabled accounts are refused at the login page and lose
 * Ring0 access, passwords never reach the audit log, and an external IAM refuses it all.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ring0Role, SessionUser } from "@/server/core/roles";
import { createPrismaClient, disconnectDb, type PrismaClient, setDatabaseUrl } from "@/server/db/client";
import { createLogger } from "@/server/logger";
import { createUserRepository } from "@/server/users/repository";
import { testDatabaseUrl } from "@/test/integration/database";
import { testCaller, trpcOutcome } from "@/test/integration/trpc";
import { createIamAccountRepository } from "./account-repository";
import { type EmbeddedIam, startEmbeddedIam } from "./provider";
import { embeddedIam, registerEmbeddedIam } from "./registry";

const client = {
  clientId: "ring0-web",
  clientSecret: "integration-test-secret-0123456789abcdef",
  redirectUris: ["http://localhost:3000/api/auth/callback/ring0-iam"],
  postLogoutRedirectUris: ["http://localhost:3000/signin"],
};

let db: PrismaClient;
let iam: EmbeddedIam;
let issuer: string;
let stateDir: string;
const savedIssuer = process.env.OIDC_ISSUER;

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

beforeAll(async () => {
  const url = await testDatabaseUrl();
  db = createPrismaClient(url);
  setDatabaseUrl(url);
  delete process.env.OIDC_ISSUER;
  stateDir = await mkdtemp(path.join(os.tmpdir(), "ring0-iam-accounts-"));
  const port = await freePort();
  issuer = `http://localhost:${port}`;
  iam = await startEmbeddedIam({
    port,
    issuer,
    stateDir,
    accountsFile: path.join(import.meta.dirname, "seed-accounts.json"),
    clients: [client],
    logger: createLogger({}, "error"),
    storedAccounts: createIamAccountRepository(db),
  });
}, 30_000);

afterAll(async () => {
  // Other suites of this worker's database count tenants: leave none of ours behind.
  await db.iamAccount.deleteMany({ where: { tenant: { startsWith: "a-" } } });
  await db.user.deleteMany({ where: { tenant: { startsWith: "a-" } } });
  await iam?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
  if (savedIssuer !== undefined) process.env.OIDC_ISSUER = savedIssuer;
  await disconnectDb();
  await db.$disconnect();
});

/** Cookies by path and name, no automatic redirects: enough of a browser for the IAM's pages. */
function browser() {
  const jar = new Map<string, { name: string; value: string; path: string }>();
  return async (url: string, init: RequestInit = {}): Promise<Response> => {
    const target = new URL(url, issuer);
    const headers = new Headers(init.headers);
    const cookie = [...jar.values()]
      .filter((entry) => target.pathname.startsWith(entry.path))
      .map((entry) => `${entry.name}=${entry.value}`)
      .join("; ");
    if (cookie) headers.set("cookie", cookie);
    const response = await fetch(target, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
      const index = pair.indexOf("=");
      const name = pair.slice(0, index);
      const value = pair.slice(index + 1);
      const cookiePath =
        attributes.find((attribute) => attribute.toLowerCase().startsWith("path="))?.slice(5) ?? "/";
      const expired =
        value === "" || attributes.some((attribute) => /^expires=thu, 01 jan 1970/i.test(attribute));
      if (expired) jar.delete(`${cookiePath}|${name}`);
      else jar.set(`${cookiePath}|${name}`, { name, value, path: cookiePath });
    }
    return response;
  };
}

/**
 * Drives a sign-in at the IAM: authorize → login page → form post → redirects. Returns the login
 * answer when it was refused, or the client callback URL (with a code) when it succeeded.
 */
async function signInAtIam(login: string, password: string, fetchWithCookies = browser()) {
  const start = await authorize(fetchWithCookies);
  const interaction = new URL(start.headers.get("location") ?? "", issuer);
  expect(interaction.pathname).toMatch(/^\/interaction\//);
  const page = await fetchWithCookies(interaction.href);
  expect(page.status).toBe(200);
  let response = await fetchWithCookies(`${interaction.href}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: issuer },
    body: new URLSearchParams({ username: login, password }).toString(),
  });
  if (response.status < 300 || response.status >= 400) {
    return { status: response.status, html: await response.text(), callback: null };
  }
  for (let hops = 0; hops < 8; hops++) {
    const next = new URL(response.headers.get("location") ?? "", issuer);
    if (next.origin !== issuer) return { status: response.status, html: "", callback: next };
    response = await fetchWithCookies(next.href);
    if (response.status < 300 || response.status >= 400) break;
  }
  return { status: response.status, html: await response.text(), callback: null };
}

/** The IAM's first answer to an authorization request (a redirect to a login interaction or, with a live IAM session, onwards). */
async function authorize(fetchWithCookies: ReturnType<typeof browser>) {
  const verifier = randomBytes(32).toString("base64url");
  const authorize = new URL("/auth", issuer);
  authorize.search = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: client.redirectUris[0] ?? "",
    response_type: "code",
    scope: "openid profile email ring0",
    state: randomBytes(12).toString("base64url"),
    nonce: randomBytes(12).toString("base64url"),
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();
  return fetchWithCookies(authorize.href);
}

async function signInToRing0(tenant: string, username: string, role: Ring0Role): Promise<SessionUser> {
  const identity = { subject: `${tenant}:${username}`, tenant, name: username, email: null, role };
  const user = await createUserRepository(db).recordSignIn(identity, new Date());
  return { id: user.id, subject: identity.subject, name: username, email: null, tenant, role: user.role };
}

const call = (user: SessionUser) => testCaller(user, db, "accounts-test");

describe("embedded-IAM accounts created in Ring0", () => {
  it("signs in with the one-time password over HTTP; disabled accounts are refused and lose Ring0 access", async () => {
    const tenant = `a-${randomBytes(4).toString("hex")}`;
    const admin = await signInToRing0(tenant, "admin", "tenant-admin");
    expect(embeddedIam()?.issuer).toBe(issuer);

    const { account, temporaryPassword } = await call(admin).accounts.create({
      tenant,
      username: "newbie",
      name: "New Bie",
      email: `newbie@${tenant}.example`,
      role: "tenant-member",
    });
    expect(account).toMatchObject({ tenant, username: "newbie", disabled: false, createdBy: "admin" });
    expect(account).not.toHaveProperty("passwordHash");
    expect(temporaryPassword).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const stored = await db.iamAccount.findUniqueOrThrow({
      where: { tenant_username: { tenant, username: "newbie" } },
    });
    expect(stored.passwordHash).toMatch(/^scrypt\$/);
    expect(stored.passwordHash).not.toContain(temporaryPassword);

    // The new person is a member with the chosen, Ring0-managed role before they ever sign in.
    const { members } = await call(admin).members.list({ tenant });
    const newbie = members.find((member) => member.subject === `${tenant}:newbie`);
    expect(newbie).toMatchObject({ role: "tenant-member", roleSource: "ring0", lastLoginAt: null });

    const wrong = await signInAtIam("newbie", "not-the-password");
    expect(wrong.status).toBe(401);
    const sessionBrowser = browser();
    const ok = await signInAtIam("newbie", temporaryPassword, sessionBrowser);
    expect(ok.callback?.searchParams.get("code")).toBeTruthy();
    // With a live IAM session the next authorization goes straight on (no login page)…
    const silent = await authorize(sessionBrowser);
    expect(new URL(silent.headers.get("location") ?? "", issuer).pathname).not.toMatch(/^\/interaction\//);
    const qualified = await signInAtIam(`${tenant}:newbie`, temporaryPassword);
    expect(qualified.callback?.searchParams.get("code")).toBeTruthy();

    // Signing in to Ring0 (the IAM sends no role claim for it) keeps the role the admin chose.
    const session = await signInToRing0(tenant, "newbie", "tenant-viewer");
    expect(session.role).toBe("tenant-member");
    expect((await call(session).members.list({ tenant })).canManage).toBe(false);

    await call(admin).accounts.setDisabled({ tenant, username: "newbie", disabled: true });
    // …but once the account is disabled, that session asks for a login again,
    const again = await authorize(sessionBrowser);
    expect(new URL(again.headers.get("location") ?? "", issuer).pathname).toMatch(/^\/interaction\//);
    // where the account is refused.
    const refused = await signInAtIam("newbie", temporaryPassword);
    expect(refused.status).toBe(403);
    expect(refused.html).toContain("This account is disabled");
    // Wrong passwords of a disabled account say nothing about it.
    expect((await signInAtIam("newbie", "still-wrong")).html).toContain("Invalid username or password");
    expect(await createUserRepository(db).membershipRole(session.id, tenant)).toBeNull();
    expect(await createUserRepository(db).signInRefusal(session.subject, tenant)).toBe("disabled");
    expect((await trpcOutcome(call(session).members.list({ tenant })))[0]).toBe("NOT_FOUND");
    expect(
      (await call(admin).members.list({ tenant })).members.find((m) => m.userId === session.id)?.disabled,
    ).toBe(true);

    await call(admin).accounts.setDisabled({ tenant, username: "newbie", disabled: false });
    expect(await createUserRepository(db).membershipRole(session.id, tenant)).toBe("tenant-member");
    expect((await signInAtIam("newbie", temporaryPassword)).callback).not.toBeNull();

    // Nothing the audit log holds carries the password.
    const events = await db.auditEvent.findMany({ where: { tenant } });
    expect(events.map((event) => event.action)).toEqual(
      expect.arrayContaining(["account.create", "account.disable", "account.enable"]),
    );
    expect(JSON.stringify(events)).not.toContain(temporaryPassword);
    expect(JSON.stringify(events)).not.toContain(stored.passwordHash);
  });

  it("validates usernames, refuses seed usernames, duplicates and disabling oneself", async () => {
    const tenant = `a-${randomBytes(4).toString("hex")}`;
    const admin = await signInToRing0(tenant, "admin", "tenant-admin");
    const base = { tenant, name: "X", email: "x@example.com", role: "tenant-member" as const };
    const [code, message] = await trpcOutcome(call(admin).accounts.create({ ...base, username: "Ab" }));
    expect(code).toBe("BAD_REQUEST");
    expect(message).toMatch(/username: expected at least 3 characters/);
    expect(
      (await trpcOutcome(call(admin).accounts.create({ ...base, username: "x".repeat(41) })))[1],
    ).toMatch(/username: expected at most 40 characters/);
    const [seedCode, seedMessage] = await trpcOutcome(
      call(admin).accounts.create({ ...base, username: "acme-admin" }),
    );
    expect(seedCode).toBe("CONFLICT");
    expect(seedMessage).toMatch(/built-in account/);
    await call(admin).accounts.create({ ...base, username: "twice" });
    expect((await trpcOutcome(call(admin).accounts.create({ ...base, username: "twice" })))[0]).toBe(
      "CONFLICT",
    );

    const [selfCode, selfMessage] = await trpcOutcome(
      call(admin).accounts.setDisabled({ tenant, username: "admin", disabled: true }),
    );
    expect(selfCode).toBe("CONFLICT");
    expect(selfMessage).toMatch(/your own account/);

    // The same username in another tenant is fine; a bare login is then ambiguous.
    const other = `a-${randomBytes(4).toString("hex")}`;
    const otherAdmin = await signInToRing0(other, "admin", "tenant-admin");
    const { temporaryPassword } = await call(otherAdmin).accounts.create({
      ...base,
      tenant: other,
      username: "twice",
    });
    expect((await signInAtIam("twice", temporaryPassword)).html).toContain("more than one tenant");
    expect((await signInAtIam(`${other}:twice`, temporaryPassword)).callback).not.toBeNull();
  });

  it("refuses every account procedure with an external IAM", async () => {
    const tenant = `a-${randomBytes(4).toString("hex")}`;
    const admin = await signInToRing0(tenant, "admin", "tenant-admin");
    const registration = embeddedIam();
    registerEmbeddedIam(null);
    try {
      const [code, message] = await trpcOutcome(
        call(admin).accounts.create({
          tenant,
          username: "outside",
          name: "Out Side",
          email: "out@example.com",
          role: "tenant-member",
        }),
      );
      expect(code).toBe("FORBIDDEN");
      expect(message).toMatch(/managed in your identity provider/);
      expect((await trpcOutcome(call(admin).accounts.list({ tenant })))[0]).toBe("FORBIDDEN");
      expect(
        (
          await trpcOutcome(call(admin).accounts.setDisabled({ tenant, username: "outside", disabled: true }))
        )[0],
      ).toBe("FORBIDDEN");
      expect((await call(admin).members.list({ tenant })).iam.kind).toBe("external");
    } finally {
      registerEmbeddedIam(registration ?? null);
    }
  });
});
