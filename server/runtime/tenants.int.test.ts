import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { disconnectDb, getDb, setDatabaseUrl } from "@/server/db/client";
import { createLogger } from "@/server/logger";
import { testDatabaseUrl } from "@/test/integration/database";
import { forgetDeletedTenant, seedTenantsFrom } from "./tenants";

const tenant = `gone-${Date.now().toString(36)}`;

beforeAll(async () => {
  setDatabaseUrl(await testDatabaseUrl());
});

afterAll(async () => {
  await getDb().user.deleteMany({ where: { tenant } });
  await getDb().auditEvent.deleteMany({ where: { tenant } });
  await disconnectDb();
});

describe("a deleted tenant's data", () => {
  it("loses its tokens, memberships and accounts, so a new tenant of the same name starts clean", async () => {
    const db = getDb();
    const user = await db.user.create({
      data: {
        subject: `${tenant}:ada`,
        tenant,
        name: "Ada",
        memberships: { create: { tenant, role: "tenant_admin" } },
      },
    });
    await db.apiToken.create({
      data: {
        userId: user.id,
        tenant,
        name: "k",
        prefix: "r0_abc",
        hash: `h-${tenant}`,
        expiresAt: new Date(Date.now() + 86_400_000),
      },
    });
    await db.iamAccount.create({
      data: {
        tenant,
        username: "ada",
        name: "Ada",
        email: "ada@example.com",
        passwordHash: "scrypt$x",
        createdBy: "test",
      },
    });
    // Another tenant's rows are untouched.
    const other = `${tenant}-other`;
    await db.iamAccount.create({
      data: {
        tenant: other,
        username: "bob",
        name: "Bob",
        email: "bob@example.com",
        passwordHash: "scrypt$x",
        createdBy: "test",
      },
    });

    await forgetDeletedTenant(tenant, createLogger({}, "error"));

    const token = await db.apiToken.findFirst({ where: { tenant } });
    expect(token?.revokedAt).not.toBeNull();
    expect(token?.revokedBy).toBe("Ring0 (tenant deleted)");
    expect(await db.membership.count({ where: { tenant } })).toBe(0);
    expect(await db.iamAccount.count({ where: { tenant } })).toBe(0);
    expect(await db.iamAccount.count({ where: { tenant: other } })).toBe(1);
    const audit = await db.auditEvent.findFirst({ where: { tenant, action: "tenant.deleted" } });
    expect(audit?.detail).toEqual({ revokedTokens: 1, removedMemberships: 1, deletedAccounts: 1 });
    await db.iamAccount.deleteMany({ where: { tenant: other } });
  });
});

describe("seed tenants", () => {
  it("come from the seed accounts, without the operators' tenant, with their admins", () => {
    expect(
      seedTenantsFrom(
        [
          { username: "operator", tenant: "system", role: "operator" },
          { username: "acme-admin", tenant: "acme", role: "tenant-admin" },
          { username: "acme-member", tenant: "acme", role: "tenant-member" },
          { username: "globex-member", tenant: "globex", role: "tenant-member" },
        ],
        "system",
      ),
    ).toEqual([
      { name: "acme", displayName: "Acme", admins: ["acme-admin"] },
      { name: "globex", displayName: "Globex", admins: [] },
    ]);
  });
});
