import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionUser } from "@/server/core/roles";
import { createPrismaClient, disconnectDb, type PrismaClient, setDatabaseUrl } from "@/server/db/client";
import { generateToken, hashToken } from "@/server/tokens/format";
import { createTokenService } from "@/server/tokens/service";
import { testDatabaseUrl } from "@/test/integration/database";
import { type DemoKey, seedDemoUsers, testCaller, trpcCode } from "@/test/integration/trpc";

let db: PrismaClient;
let users: Record<DemoKey, SessionUser>;

beforeAll(async () => {
  const url = await testDatabaseUrl();
  db = createPrismaClient(url);
  // recordAudit writes through the process-wide client.
  setDatabaseUrl(url);
  users = await seedDemoUsers(db);
});

afterAll(async () => {
  await disconnectDb();
  await db.$disconnect();
});

const callerFor = (user: SessionUser) => testCaller(user, db, "tokens-test");
const codeOf = trpcCode;

/** A clock tests move by hand. */
function manualClock(start = new Date()) {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance: (ms: number) => {
      current += ms;
    },
  };
}

describe("tokens.create and verification", () => {
  it("returns the plaintext once, and it verifies as its owner", async () => {
    const before = Date.now();
    const created = await callerFor(users.acmeMember!).tokens.create({ tenant: "acme", name: "laptop" });
    expect(created.token).toMatch(/^r0_[0-9A-Za-z]{43}$/);
    expect(created.token.startsWith(created.prefix)).toBe(true);
    const days = (created.expiresAt.getTime() - before) / 86_400_000;
    expect(days).toBeGreaterThan(29.99);
    expect(days).toBeLessThan(30.01);

    const verified = await createTokenService({ db }).verifyToken(created.token);
    expect(verified?.token).toMatchObject({ id: created.id, tenant: "acme", name: "laptop" });
    expect(verified?.user).toEqual(users.acmeMember);
    expect(verified?.token).not.toHaveProperty("hash");
  });

  it("never gives the secret or its hash back later", async () => {
    const created = await callerFor(users.acmeMember!).tokens.create({ tenant: "acme", name: "ci" });
    const listed = await callerFor(users.acmeMember!).tokens.list();
    const row = listed.find((token) => token.id === created.id);
    expect(row).toMatchObject({ prefix: created.prefix, name: "ci", ownerName: "Adam Member" });
    expect(row).not.toHaveProperty("hash");
    expect(row).not.toHaveProperty("token");
    const serialised = JSON.stringify(listed);
    expect(serialised).not.toContain(created.token);
    expect(serialised).not.toContain(hashToken(created.token));
    // Stored: the hash, never the plaintext.
    const stored = await db.apiToken.findUniqueOrThrow({ where: { id: created.id } });
    expect(stored.hash).toBe(hashToken(created.token));
    expect(JSON.stringify(stored)).not.toContain(created.token);
  });

  it("validates input and names the field", async () => {
    const caller = callerFor(users.acmeMember!);
    for (const input of [
      { tenant: "acme", name: "" },
      { tenant: "acme", name: "x".repeat(65) },
      { tenant: "acme", name: "ok", expiresInDays: 0 },
      { tenant: "acme", name: "ok", expiresInDays: 366 },
      { tenant: "Not A Tenant", name: "ok" },
    ]) {
      const error = await caller.tokens.create(input).then(
        () => null,
        (cause: unknown) => cause,
      );
      expect(error).toBeInstanceOf(TRPCError);
      expect((error as TRPCError).code).toBe("BAD_REQUEST");
      const field = Object.keys(input).find((key) => (error as TRPCError).message.includes(`${key}:`));
      expect(field, (error as TRPCError).message).toBeDefined();
    }
    const yearLong = await caller.tokens.create({ tenant: "acme", name: "year", expiresInDays: 365 });
    expect(yearLong.expiresAt.getTime() - Date.now()).toBeGreaterThan(364.99 * 86_400_000);
  });

  it("returns null for malformed, unknown, revoked and expired tokens", async () => {
    const clock = manualClock();
    const service = createTokenService({ db, now: clock.now });
    const verify = (token: string) => service.verifyToken(token);
    expect(await verify("")).toBeNull();
    expect(await verify("not-a-token")).toBeNull();
    expect(await verify("r0_short")).toBeNull();
    expect(await verify(generateToken())).toBeNull();

    const revoked = await service.issueToken({
      user: users.acmeMember!,
      tenant: "acme",
      name: "gone",
      expiresInDays: 5,
    });
    expect(await verify(revoked.plaintext)).not.toBeNull();
    await service.revokeToken(revoked.token.id, users.acmeMember!);
    expect(await verify(revoked.plaintext)).toBeNull();

    const expiring = await service.issueToken({
      user: users.acmeMember!,
      tenant: "acme",
      name: "brief",
      expiresInDays: 1,
    });
    clock.advance(86_400_000 - 1);
    expect(await verify(expiring.plaintext)).not.toBeNull();
    clock.advance(1);
    expect(await verify(expiring.plaintext)).toBeNull();
  });

  it("stops working when its owner leaves the tenant", async () => {
    const leaver = await db.user.create({
      data: {
        subject: "acme:token-leaver",
        tenant: "acme",
        name: "Token Leaver",
        memberships: { create: { tenant: "acme", role: "tenant_member" } },
      },
    });
    const user: SessionUser = {
      id: leaver.id,
      subject: leaver.subject,
      name: leaver.name,
      email: null,
      tenant: "acme",
      role: "tenant-member",
    };
    const service = createTokenService({ db });
    const issued = await service.issueToken({ user, tenant: "acme", name: "leaving", expiresInDays: 1 });
    expect(await service.verifyToken(issued.plaintext)).not.toBeNull();
    await db.membership.deleteMany({ where: { userId: leaver.id } });
    expect(await service.verifyToken(issued.plaintext)).toBeNull();
    // Deleting the user deletes the token with it.
    await db.user.delete({ where: { id: leaver.id } });
    expect(await db.apiToken.count({ where: { id: issued.token.id } })).toBe(0);
  });

  it("records a use at most once a minute", async () => {
    const clock = manualClock(new Date("2030-01-01T00:00:00Z"));
    const service = createTokenService({ db, now: clock.now });
    const issued = await service.issueToken({
      user: users.acmeMember!,
      tenant: "acme",
      name: "busy",
      expiresInDays: 30,
    });
    const lastUsed = async () =>
      (await db.apiToken.findUniqueOrThrow({ where: { id: issued.token.id } })).lastUsedAt?.toISOString();
    expect(await lastUsed()).toBeUndefined();

    await service.verifyToken(issued.plaintext);
    expect(await lastUsed()).toBe("2030-01-01T00:00:00.000Z");
    clock.advance(30_000);
    await service.verifyToken(issued.plaintext);
    clock.advance(29_999);
    await service.verifyToken(issued.plaintext);
    expect(await lastUsed()).toBe("2030-01-01T00:00:00.000Z");
    clock.advance(1);
    const verified = await service.verifyToken(issued.plaintext);
    expect(await lastUsed()).toBe("2030-01-01T00:01:00.000Z");
    expect(verified?.token.lastUsedAt?.toISOString()).toBe("2030-01-01T00:01:00.000Z");

    // Concurrent requests after the minute write once between them.
    clock.advance(60_000);
    const results = await Promise.all(Array.from({ length: 5 }, () => service.verifyToken(issued.plaintext)));
    expect(results.every((result) => result !== null)).toBe(true);
    expect(await lastUsed()).toBe("2030-01-01T00:02:00.000Z");
  });
});

describe("token authorization", () => {
  it("hides other tenants: a member cannot issue for globex", async () => {
    expect(await codeOf(callerFor(users.acmeMember!).tokens.create({ tenant: "globex", name: "x" }))).toBe(
      "NOT_FOUND",
    );
    expect(await codeOf(callerFor(users.acmeAdmin!).tokens.create({ tenant: "globex", name: "x" }))).toBe(
      "NOT_FOUND",
    );
    expect(await codeOf(callerFor(users.acmeMember!).tokens.list({ tenant: "globex" }))).toBe("NOT_FOUND");
    const issued = await callerFor(users.operator!).tokens.create({ tenant: "globex", name: "ops" });
    expect(issued.prefix).toMatch(/^r0_/);
  });

  it("members see and revoke only their own tokens", async () => {
    const adminToken = await callerFor(users.acmeAdmin!).tokens.create({ tenant: "acme", name: "admin's" });
    const memberToken = await callerFor(users.acmeMember!).tokens.create({
      tenant: "acme",
      name: "member's",
    });
    const member = callerFor(users.acmeMember!);

    const listed = await member.tokens.list({ tenant: "acme" });
    expect(listed.map((token) => token.id)).toContain(memberToken.id);
    expect(listed.map((token) => token.id)).not.toContain(adminToken.id);
    expect(new Set(listed.map((token) => token.userId))).toEqual(new Set([users.acmeMember!.id]));

    expect(await codeOf(member.tokens.revoke({ id: adminToken.id }))).toBe("NOT_FOUND");
    expect(await codeOf(member.tokens.revoke({ id: "does-not-exist" }))).toBe("NOT_FOUND");
    const stillActive = await db.apiToken.findUniqueOrThrow({ where: { id: adminToken.id } });
    expect(stillActive.revokedAt).toBeNull();

    const revoked = await member.tokens.revoke({ id: memberToken.id });
    expect(revoked).toMatchObject({ id: memberToken.id, revokedBy: "Adam Member" });
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    // Idempotent: a second revoke changes nothing.
    const again = await member.tokens.revoke({ id: memberToken.id });
    expect(again.revokedAt?.getTime()).toBe(revoked.revokedAt?.getTime());
    expect(again).not.toHaveProperty("hash");
  });

  it("tenant admins list and revoke their tenant's tokens, not globex's", async () => {
    const memberToken = await callerFor(users.acmeMember!).tokens.create({
      tenant: "acme",
      name: "for admin",
    });
    const globexToken = await callerFor(users.globexAdmin!).tokens.create({
      tenant: "globex",
      name: "globex",
    });
    const admin = callerFor(users.acmeAdmin!);

    const listed = await admin.tokens.list();
    expect(listed.map((token) => token.id)).toContain(memberToken.id);
    expect(listed.map((token) => token.id)).not.toContain(globexToken.id);
    expect(new Set(listed.map((token) => token.tenant))).toEqual(new Set(["acme"]));
    expect(await codeOf(admin.tokens.list({ tenant: "globex" }))).toBe("NOT_FOUND");

    expect(await codeOf(admin.tokens.revoke({ id: globexToken.id }))).toBe("NOT_FOUND");
    const revoked = await admin.tokens.revoke({ id: memberToken.id });
    expect(revoked.revokedBy).toBe("Alice Admin");
  });

  it("operators see every tenant's tokens and revoke any", async () => {
    const globexToken = await callerFor(users.globexAdmin!).tokens.create({ tenant: "globex", name: "seen" });
    const operator = callerFor(users.operator!);
    const listed = await operator.tokens.list();
    // Other suites sharing this worker's database issue tokens too: both tenants' must be among them.
    expect(listed.map((token) => token.tenant)).toEqual(expect.arrayContaining(["acme", "globex"]));
    expect(
      (await operator.tokens.list({ tenant: "globex" })).every((token) => token.tenant === "globex"),
    ).toBe(true);
    expect((await operator.tokens.revoke({ id: globexToken.id })).revokedBy).toBe("Olivia Operator");
  });
});

describe("token audit", () => {
  it("records issue and revoke by prefix, never the secret", async () => {
    const created = await callerFor(users.acmeMember!).tokens.create({ tenant: "acme", name: "audited" });
    await callerFor(users.acmeAdmin!).tokens.revoke({ id: created.id });
    await callerFor(users.acmeAdmin!).tokens.revoke({ id: created.id });

    const events = await db.auditEvent.findMany({
      where: { target: created.prefix },
      orderBy: { at: "asc" },
    });
    expect(events.map((event) => [event.action, event.actorName, event.tenant, event.result])).toEqual([
      ["token.issue", "Adam Member", "acme", "success"],
      ["token.revoke", "Alice Admin", "acme", "success"],
    ]);
    expect(
      events.every((event) => event.targetKind === "api-token" && event.requestId === "tokens-test"),
    ).toBe(true);
    const serialised = JSON.stringify(events);
    expect(serialised).not.toContain(created.token);
    expect(serialised).not.toContain(hashToken(created.token));

    // Tenant admins read them through the audit log.
    const log = await callerFor(users.acmeAdmin!).audit.list({ action: "token.", limit: 200 });
    expect(log.events.filter((event) => event.target === created.prefix)).toHaveLength(2);
  });
});
