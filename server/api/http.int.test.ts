/**
 * tRPC over HTTP as the route handler serves it (handleTrpcRequest), against the real database: a
 * mutation acting with the session cookie must come from one of Ring0's origins, a bearer token
 * needs none, and a body over the cap is refused with 413 whether it declares its length or not.
 */
import { encode } from "next-auth/jwt";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { disconnectDb, getDb, setDatabaseUrl } from "@/server/db/client";
import { createTokenService } from "@/server/tokens/service";
import { testDatabaseUrl } from "@/test/integration/database";
import { type DemoKey, seedDemoUsers } from "@/test/integration/trpc";
import { handleTrpcRequest, type TrpcHttpSettings } from "./http";

const secret = "http-guard-test-secret-http-guard-test-0123";
const ring0 = "http://ring0.test";
const settings: TrpcHttpSettings = { allowedOrigins: [ring0], maxBodyBytes: 16_384 };
const tokenName = "origin wall test";
let users: Record<DemoKey, SessionUser>;
let cookie = "";
let bearer = "";

async function sessionCookie(user: SessionUser): Promise<string> {
  const jwt = await encode({
    token: { uid: user.id, subject: user.subject, name: user.name, tenant: user.tenant, role: user.role },
    secret,
  });
  return `next-auth.session-token=${jwt}`;
}

/** A tRPC mutation as the fetch adapter receives it (superjson input, POST). */
function mutation(path: string, input: unknown, headers: Record<string, string>, body?: BodyInit): Request {
  return new Request(`${ring0}/api/trpc/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: body ?? JSON.stringify(superjson.serialize(input)),
    ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
}

async function answer(request: Request): Promise<{ status: number; code?: string; message?: string }> {
  const response = await handleTrpcRequest(request, settings);
  const body = (await response.json()) as {
    error?: { json?: { message?: string; data?: { code?: string } } };
  };
  return { status: response.status, code: body.error?.json?.data?.code, message: body.error?.json?.message };
}

const issue = { tenant: "acme", name: tokenName, expiresInDays: 1 };

beforeAll(async () => {
  process.env.NEXTAUTH_SECRET = secret;
  setDatabaseUrl(await testDatabaseUrl());
  users = await seedDemoUsers(getDb());
  cookie = await sessionCookie(users.acmeAdmin);
  bearer = (
    await createTokenService({ db: getDb() }).issueToken({
      user: users.acmeAdmin,
      tenant: "acme",
      name: tokenName,
      expiresInDays: 1,
    })
  ).plaintext;
});

afterAll(async () => {
  // Suites sharing the worker database count tokens: leave none of ours behind.
  await getDb().apiToken.deleteMany({ where: { name: tokenName } });
  await disconnectDb();
});

describe("the Origin wall on tRPC mutations", () => {
  it("refuses a session-cookie mutation from a foreign origin with 403, and does nothing", async () => {
    const before = await getDb().apiToken.count({ where: { name: tokenName } });
    const refused = await answer(
      mutation("tokens.create", issue, { cookie, origin: "https://evil.example" }),
    );
    expect(refused).toMatchObject({ status: 403, code: "FORBIDDEN" });
    expect(refused.message).toMatch(/^Origin not allowed: "https:\/\/evil.example"/);
    // No Origin and no Referer: a cookie alone does not act either.
    expect(await answer(mutation("tokens.create", issue, { cookie }))).toMatchObject({ status: 403 });
    expect(await getDb().apiToken.count({ where: { name: tokenName } })).toBe(before);
  });

  it("lets the same mutation through from Ring0's own origin (or its Referer)", async () => {
    expect(await answer(mutation("tokens.create", issue, { cookie, origin: ring0 }))).toMatchObject({
      status: 200,
    });
    expect(
      await answer(mutation("tokens.create", issue, { cookie, referer: `${ring0}/t/acme/tokens` })),
    ).toMatchObject({ status: 200 });
  });

  it("needs no Origin for a bearer token (the CLI)", async () => {
    expect(
      await answer(mutation("tokens.create", issue, { authorization: `Bearer ${bearer}` })),
    ).toMatchObject({ status: 200 });
  });

  it("leaves reads alone: a query over GET from anywhere still answers as the session", async () => {
    const response = await handleTrpcRequest(
      new Request(`${ring0}/api/trpc/me.get`, { headers: { cookie, origin: "https://evil.example" } }),
      settings,
    );
    expect(response.status).toBe(200);
  });
});

describe("the body cap on tRPC", () => {
  const big = { ...issue, name: "x".repeat(20_000) };

  it("refuses a declared body over the cap with 413, naming the limit", async () => {
    const refused = await answer(mutation("tokens.create", big, { cookie, origin: ring0 }));
    expect(refused).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    expect(refused.message).toContain("larger than 16384 bytes (RING0_TRPC_MAX_BODY_BYTES)");
  });

  it("cuts off a streamed body without a length once it passes the cap, reading no further", async () => {
    // 10 MiB offered in 4 KiB chunks, made only as they are pulled.
    const offered = 10 * 1024 * 1024;
    const chunk = new TextEncoder().encode("x".repeat(4_096));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= offered) return controller.close();
        controller.enqueue(chunk);
        sent += chunk.length;
      },
    });
    const refused = await answer(mutation("tokens.create", undefined, { cookie, origin: ring0 }, stream));
    expect(refused).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    // The cap and what the streams buffer ahead, never the rest.
    expect(sent).toBeLessThan(256 * 1024);
  });
});
