import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AuditResult,
  createPrismaClient,
  disconnectDb,
  getDb,
  type PrismaClient,
  Role,
  setDatabaseUrl,
} from "@/server/db/client";
import { testDatabaseUrl } from "@/test/integration/database";

let db: PrismaClient;

beforeAll(async () => {
  db = createPrismaClient(await testDatabaseUrl());
});

afterAll(async () => {
  await db.$disconnect();
  await disconnectDb();
});

describe("prisma client", () => {
  it("creates a user with a membership and an audit event", async () => {
    const subject = `sub-${randomUUID()}`;
    const user = await db.user.create({
      data: {
        subject,
        tenant: "acme",
        name: "Ada",
        email: "ada@example.com",
        memberships: { create: { tenant: "acme", role: Role.tenant_admin } },
      },
      include: { memberships: true },
    });
    expect(user.id).toMatch(/^c[a-z0-9]{20,}$/);
    expect(user.memberships).toHaveLength(1);
    expect(user.memberships[0]?.role).toBe("tenant_admin");

    const event = await db.auditEvent.create({
      data: {
        actorId: user.id,
        actorName: user.name,
        actorTenant: user.tenant,
        tenant: "acme",
        action: "auth.sign-in",
        result: AuditResult.success,
        requestId: "req-1",
        detail: { ip: "127.0.0.1", nested: { ok: true } },
      },
    });
    expect(event.at).toBeInstanceOf(Date);
    expect(event.detail).toEqual({ ip: "127.0.0.1", nested: { ok: true } });

    // Enum values are stored with their mapped names.
    const roles = await db.$queryRaw<{ role: string }[]>`
      SELECT role::text AS role FROM memberships WHERE user_id = ${user.id}`;
    expect(roles).toEqual([{ role: "tenant-admin" }]);

    // Duplicate membership for the same tenant is rejected.
    await expect(
      db.membership.create({ data: { userId: user.id, tenant: "acme", role: Role.tenant_viewer } }),
    ).rejects.toMatchObject({ code: "P2002" });

    // Deleting the user cascades to memberships and keeps the audit trail (actor set null).
    await db.user.delete({ where: { id: user.id } });
    expect(await db.membership.count({ where: { userId: user.id } })).toBe(0);
    const kept = await db.auditEvent.findUniqueOrThrow({ where: { id: event.id } });
    expect(kept.actorId).toBeNull();
    expect(kept.actorName).toBe("Ada");
  });

  it("shares one process-wide client through globalThis", async () => {
    setDatabaseUrl(await testDatabaseUrl());
    const first = getDb();
    expect(getDb()).toBe(first);
    expect(await first.user.count()).toBeGreaterThanOrEqual(0);
  });
});
