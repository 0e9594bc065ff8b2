import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAuditRepository } from "@/server/audit/repository";
import type { SessionUser } from "@/server/core/roles";
import { createPrismaClient, type PrismaClient } from "@/server/db/client";
import { testDatabaseUrl } from "@/test/integration/database";
import { type DemoKey, seedDemoUsers, testCaller, trpcCode } from "@/test/integration/trpc";

let db: PrismaClient;
let users: Record<DemoKey, SessionUser>;

beforeAll(async () => {
  db = createPrismaClient(await testDatabaseUrl());
  users = await seedDemoUsers(db);
  const audit = createAuditRepository(db);
  for (const user of Object.values(users)) {
    await audit.record({
      actorId: user.id,
      actorName: user.name,
      actorTenant: user.tenant,
      tenant: user.tenant,
      action: "auth.sign-in",
      result: "success",
    });
  }
});

afterAll(async () => {
  await db.$disconnect();
});

const callerFor = (user: SessionUser | null) => testCaller(user, db);
const codeOf = trpcCode;

describe("procedure tiers", () => {
  it("protectedProcedure refuses anonymous callers", async () => {
    expect(await codeOf(callerFor(null).me.get())).toBe("UNAUTHORIZED");
  });

  it("operatorProcedure admits only operators", async () => {
    expect(await codeOf(callerFor(users.acmeAdmin!).tenants.list())).toBe("FORBIDDEN");
    const tenants = await callerFor(users.operator!).tenants.list();
    // Other suites sharing this worker's database add tenants of their own: check ours are there.
    expect(tenants.map((tenant) => tenant.tenant)).toEqual(
      expect.arrayContaining(["acme", "globex", "system"]),
    );
    expect(tenants.find((tenant) => tenant.tenant === "acme")).toMatchObject({ members: 2, admins: 1 });
  });

  it("tenantProcedure admits members and operators, and hides other tenants as not found", async () => {
    const overview = await callerFor(users.acmeMember!).tenants.overview({ tenant: "acme" });
    expect(overview).toMatchObject({ tenant: "acme", memberCount: 2, isTenantAdmin: false });
    expect(await codeOf(callerFor(users.acmeMember!).tenants.overview({ tenant: "globex" }))).toBe(
      "NOT_FOUND",
    );
    expect(await codeOf(callerFor(users.acmeAdmin!).tenants.members({ tenant: "globex" }))).toBe("NOT_FOUND");
    expect(await codeOf(callerFor(users.acmeAdmin!).tenants.members({ tenant: "nonexistent" }))).toBe(
      "NOT_FOUND",
    );
    expect(
      (await callerFor(users.operator!).tenants.members({ tenant: "globex" })).map((m) => m.name),
    ).toEqual(["Gina Admin"]);
  });

  it("a removed membership closes the tenant even with a still-valid session", async () => {
    const user = await db.user.create({ data: { subject: "acme:leaver", tenant: "acme", name: "Leaver" } });
    const leaver: SessionUser = {
      id: user.id,
      subject: user.subject,
      name: "Leaver",
      email: null,
      tenant: "acme",
      role: "tenant-member",
    };
    expect(await codeOf(callerFor(leaver).tenants.overview({ tenant: "acme" }))).toBe("NOT_FOUND");
  });

  it("validation errors are BAD_REQUEST and name the field", async () => {
    try {
      await callerFor(users.acmeAdmin!).tenants.overview({ tenant: "Not A Tenant" });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(TRPCError);
      expect((error as TRPCError).code).toBe("BAD_REQUEST");
    }
  });
});

describe("audit.list", () => {
  it("gives operators every tenant's events and tenant admins only their own", async () => {
    const all = await callerFor(users.operator!).audit.list({ limit: 50 });
    // Other suites share this worker's database and audit their own tenants, so: at least these three.
    expect([...new Set(all.events.map((event) => event.tenant))]).toEqual(
      expect.arrayContaining(["system", "acme", "globex"]),
    );
    const acme = await callerFor(users.acmeAdmin!).audit.list({ limit: 50 });
    expect(new Set(acme.events.map((event) => event.tenant))).toEqual(new Set(["acme"]));
    expect(await codeOf(callerFor(users.acmeAdmin!).audit.list({ tenant: "globex", limit: 50 }))).toBe(
      "NOT_FOUND",
    );
  });

  it("refuses members", async () => {
    expect(await codeOf(callerFor(users.acmeMember!).audit.list({ limit: 50 }))).toBe("FORBIDDEN");
  });

  it("pages newest first with a stable cursor", async () => {
    const first = await callerFor(users.operator!).audit.list({ limit: 2 });
    expect(first.events).toHaveLength(2);
    expect(first.nextCursor).toBe(first.events[1]!.id);
    const second = await callerFor(users.operator!).audit.list({ limit: 2, cursor: first.nextCursor! });
    expect(second.events[0]!.id).not.toBe(first.events[1]!.id);
    expect(second.events[0]!.at.getTime()).toBeLessThanOrEqual(first.events[1]!.at.getTime());
  });
});

describe("audit.execSessions", () => {
  const session = (user: SessionUser, tenant: string, transcript?: string) =>
    db.execSession.create({
      data: {
        userId: user.id,
        userName: user.name,
        userTenant: user.tenant,
        tenant,
        source: "tenant-pod",
        namespace: "default",
        pod: `web-${Math.random().toString(36).slice(2, 6)}`,
        command: ["sh"],
        endedAt: new Date(),
        exitCode: 0,
        endReason: "exited",
        bytesIn: 12n,
        bytesOut: 34n,
        ...(transcript ? { transcript: new Uint8Array(Buffer.from(transcript)) } : {}),
      },
    });

  it("shows shell sessions by the audit log's rules, with transcripts only within scope", async () => {
    const ours = await session(users.acmeAdmin!, "acme", "$ echo hi\r\nhi\r\n");
    const theirs = await session(users.globexAdmin!, "globex");
    const acme = await callerFor(users.acmeAdmin!).audit.execSessions({ limit: 200 });
    expect(new Set(acme.sessions.map((row) => row.tenant))).toEqual(new Set(["acme"]));
    expect(acme.sessions.find((row) => row.id === ours.id)).toMatchObject({
      pod: ours.pod,
      command: ["sh"],
      exitCode: 0,
      bytesIn: 12,
      bytesOut: 34,
      hasTranscript: true,
    });
    const all = await callerFor(users.operator!).audit.execSessions({ limit: 200 });
    expect(all.sessions.map((row) => row.id)).toEqual(expect.arrayContaining([ours.id, theirs.id]));
    expect(await codeOf(callerFor(users.acmeAdmin!).audit.execSessions({ tenant: "globex", limit: 5 }))).toBe(
      "NOT_FOUND",
    );
    expect(await codeOf(callerFor(users.acmeMember!).audit.execSessions({ limit: 5 }))).toBe("FORBIDDEN");

    expect((await callerFor(users.acmeAdmin!).audit.execTranscript({ id: ours.id })).text).toContain("hi");
    expect(await codeOf(callerFor(users.globexAdmin!).audit.execTranscript({ id: ours.id }))).toBe(
      "NOT_FOUND",
    );
    expect(await codeOf(callerFor(users.globexAdmin!).audit.execTranscript({ id: theirs.id }))).toBe(
      "NOT_FOUND",
    );
  });
});

describe("me.events", () => {
  it("streams heartbeats to a signed-in user and stops when aborted", async () => {
    const feed = await callerFor(users.acmeMember!).me.events({ intervalMs: 1000 });
    const iterator = feed[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({
      type: "heartbeat",
      sequence: 1,
      user: "acme:acme-member",
    });
    expect((await iterator.next()).value).toMatchObject({ type: "heartbeat", sequence: 2 });
    await iterator.return?.();
  });
});
