/**
 * Bearer-token authentication over HTTP: the tRPC fetch adapter with the real createContext, so
 * headers (Authorization, Cookie) travel the way they do for the CLI and kubectl-era clients.
 */
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { encode } from "next-auth/jwt";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppRouter, appRouter } from "@/server/api/root";
import { createContext } from "@/server/api/trpc";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb, setDatabaseUrl } from "@/server/db/client";
import { generateToken } from "@/server/tokens/format";
import { createTokenService } from "@/server/tokens/service";
import { testDatabaseUrl } from "@/test/integration/database";
import { type DemoKey, seedDemoUsers } from "@/test/integration/trpc";

const secret = "bearer-test-secret-bearer-test-secret-0123";
let users: Record<DemoKey, SessionUser>;
const tokens = {} as Record<"acmeAdmin" | "operator" | "operatorForAcme" | "globexAdmin", string>;

/** A tRPC client whose fetch goes straight into the fetch adapter (no server needed). */
function clientWith(headers: Record<string, string>) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: "http://ring0.test/api/trpc",
        transformer: superjson,
        headers,
        fetch: async (url, init) =>
          fetchRequestHandler({
            endpoint: "/api/trpc",
            req: new Request(url, init as RequestInit),
            router: appRouter,
            createContext: ({ req }) => createContext({ headers: req.headers }),
            onError: () => {},
          }),
      }),
    ],
  });
}

const bearer = (token: string) => clientWith({ authorization: `Bearer ${token}` });

async function outcome(promise: Promise<unknown>): Promise<[string, string]> {
  try {
    await promise;
    return ["OK", ""];
  } catch (error) {
    if (error instanceof TRPCClientError) return [String(error.data?.code), error.message];
    throw error;
  }
}

async function sessionCookie(user: SessionUser): Promise<string> {
  const jwt = await encode({
    token: { uid: user.id, subject: user.subject, name: user.name, tenant: user.tenant, role: user.role },
    secret,
  });
  return `next-auth.session-token=${jwt}`;
}

beforeAll(async () => {
  process.env.NEXTAUTH_SECRET = secret;
  setDatabaseUrl(await testDatabaseUrl());
  users = await seedDemoUsers(getDb());
  const service = createTokenService({ db: getDb() });
  const issue = async (user: SessionUser, tenant: string) =>
    (await service.issueToken({ user, tenant, name: "bearer test", expiresInDays: 1 })).plaintext;
  tokens.acmeAdmin = await issue(users.acmeAdmin, "acme");
  tokens.globexAdmin = await issue(users.globexAdmin, "globex");
  tokens.operator = await issue(users.operator, "system");
  tokens.operatorForAcme = await issue(users.operator, "acme");
});

afterAll(async () => {
  // Suites sharing the worker database count tokens per tenant: leave no operator-tenant token behind.
  await getDb().apiToken.deleteMany({ where: { tenant: "system", userId: users.operator.id } });
  await disconnectDb();
});

describe("bearer tokens on the tRPC API", () => {
  it("act as the token's owner", async () => {
    const me = await bearer(tokens.acmeAdmin).me.get.query();
    expect(me).toMatchObject({ id: users.acmeAdmin.id, tenant: "acme", role: "tenant-admin" });
    const operator = await bearer(tokens.operator).me.get.query();
    expect(operator).toMatchObject({ id: users.operator.id, role: "operator" });
  });

  it("refuse unknown, revoked and expired tokens with UNAUTHORIZED and a clear message", async () => {
    const [code, message] = await outcome(bearer(generateToken()).me.get.query());
    expect(code).toBe("UNAUTHORIZED");
    expect(message).toMatch(/API token is not valid.*expired or revoked/);

    const service = createTokenService({ db: getDb() });
    const revoked = await service.issueToken({
      user: users.acmeMember,
      tenant: "acme",
      name: "revoked",
      expiresInDays: 1,
    });
    expect((await outcome(bearer(revoked.plaintext).me.get.query()))[0]).toBe("OK");
    await service.revokeToken(revoked.token.id, users.acmeMember);
    expect((await outcome(bearer(revoked.plaintext).me.get.query()))[0]).toBe("UNAUTHORIZED");

    const expired = await service.issueToken({
      user: users.acmeMember,
      tenant: "acme",
      name: "expired",
      expiresInDays: 1,
    });
    await getDb().apiToken.update({
      where: { id: expired.token.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await outcome(bearer(expired.plaintext).me.get.query()))[0]).toBe("UNAUTHORIZED");
  });

  it("never fall back to the session cookie when a bearer header is present", async () => {
    const cookie = await sessionCookie(users.operator);
    // The cookie alone works…
    expect(await clientWith({ cookie }).me.get.query()).toMatchObject({ role: "operator" });
    // …but not next to a bad bearer token, nor next to a bearer credential that is no Ring0 token.
    for (const authorization of [`Bearer ${generateToken()}`, "Bearer not-a-ring0-token", "Bearer"]) {
      const [code, message] = await outcome(clientWith({ cookie, authorization }).me.get.query());
      expect(code, authorization).toBe("UNAUTHORIZED");
      expect(message).toMatch(/token/i);
    }
    // Nothing at all: the usual sign-in message.
    expect(await outcome(clientWith({}).me.get.query())).toEqual(["UNAUTHORIZED", "Sign in to continue."]);
  });

  it("confine a member's token to its tenant", async () => {
    expect(await bearer(tokens.acmeAdmin).tenants.overview.query({ tenant: "acme" })).toMatchObject({
      tenant: "acme",
    });
    expect((await outcome(bearer(tokens.acmeAdmin).tenants.overview.query({ tenant: "globex" })))[0]).toBe(
      "NOT_FOUND",
    );
    expect((await outcome(bearer(tokens.globexAdmin).tenants.members.query({ tenant: "acme" })))[0]).toBe(
      "NOT_FOUND",
    );
    expect((await outcome(bearer(tokens.acmeAdmin).tenants.list.query()))[0]).toBe("FORBIDDEN");
  });

  it("let an operator's token for the operator tenant act as the operator everywhere", async () => {
    const client = bearer(tokens.operator);
    expect(await client.tenants.overview.query({ tenant: "globex" })).toMatchObject({ tenant: "globex" });
    expect((await client.tenants.list.query()).map((tenant) => tenant.tenant)).toContain("acme");
  });

  it("confine an operator's token issued for another tenant to that tenant", async () => {
    const client = bearer(tokens.operatorForAcme);
    expect(await client.tenants.overview.query({ tenant: "acme" })).toMatchObject({ tenant: "acme" });
    expect((await outcome(client.tenants.overview.query({ tenant: "globex" })))[0]).toBe("NOT_FOUND");
    const [code, message] = await outcome(client.tenants.list.query());
    expect(code).toBe("FORBIDDEN");
    expect(message).toMatch(/scoped to tenant "acme"/);
    // It cannot mint itself a wider token either.
    expect(
      (
        await outcome(client.tokens.create.mutate({ tenant: "system", name: "escalate", expiresInDays: 1 }))
      )[0],
    ).toBe("NOT_FOUND");
    expect((await outcome(client.tokens.list.query()))[0]).toBe("FORBIDDEN");
    expect(await client.me.get.query()).toMatchObject({ role: "operator" });
  });
});
