import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "@/server/api/root";
import type { Context } from "@/server/api/trpc";
import { createAuditRepository } from "@/server/audit/repository";
import type { SessionUser } from "@/server/auth/roles";
import { createPrismaClient, type PrismaClient } from "@/server/db/client";
import { createLogger } from "@/server/logger";
import { createUserRepository } from "@/server/users/repository";
import { testDatabaseUrl } from "@/test/integration/database";

let db: PrismaClient;
const users: Record<string, SessionUser> = {};

const identities = [
  {
    key: "operator",
    subject: "system:operator",
    tenant: "system",
    name: "Olivia Operator",
    role: "operator",
  },
  { key: "acmeAdmin", subject: "acme:acme-admin", tenant: "acme", name: "Alice Admin", role: "tenant-admin" },
  {
    key: "acmeMember",
    subject: "acme:acme-member",
    tenant: "acme",
    name: "Adam Member",
    role: "tenant-member",
  },
  {
    key: "globexAdmin",
    subject: "globex:globex-admin",
    tenant: "globex",
    name: "Gina Admin",
    role: "tenant-admin",
  },
] as const;

beforeAll(async () => {
  db = createPrismaClient(await testDatabaseUrl());
  const repository = createUserRepository(db);
  const audit = createAuditRepository(db);
  for (const identity of identities) {
    const user = await repository.recordSignIn({ ...identity, email: null }, new Date());
    users[identity.key] = {
      id: user.id,
      subject: identity.subject,
      name: identity.name,
      email: null,
      tenant: identity.tenant,
      role: identity.role,
    };
    await audit.record({
      actorId: user.id,
      actorName: identity.name,
      actorTenant: identity.tenant,
      tenant: identity.tenant,
      action: "auth.sign-in",
      result: "success",
    });
  }
});

afterAll(async () => {
  await db.$disconnect();
});

function callerFor(user: SessionUser | null) {
  const context: Context = { user, db, requestId: "test", logger: createLogger({}, "error") };
  return createCaller(context);
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "OK";
  } catch (error) {
    if (error instanceof TRPCError) return error.code;
    throw error;
  }
}

describe("procedure tiers", () => {
  it("protectedProcedure refuses anonymous callers", async () => {
    expect(await codeOf(callerFor(null).me.get())).toBe("UNAUTHORIZED");
  });

  it("operatorProcedure admits only operators", async () => {
    expect(await codeOf(callerFor(users.acmeAdmin!).tenants.list())).toBe("FORBIDDEN");
    const tenants = await callerFor(users.operator!).tenants.list();
    expect(tenants.map((tenant) => tenant.tenant)).toEqual(["acme", "globex", "system"]);
    expect(tenants.find((tenant) => tenant.tenant === "acme")).toMatchObject({ members: 2, admins: 1 });
  });

  it("tenantProcedure admits members and operators, and hides other tenants as not found", async () => {
    const overview = await callerFor(users.acmeMember!).tenants.overview({ tenant: "acme" });
    expect(overview).toMatchObject({ tenant: "acme", memberCount: 2, canManageMembers: false });
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
    expect(new Set(all.events.map((event) => event.tenant))).toEqual(new Set(["system", "acme", "globex"]));
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
