/**
 * Ring0-managed membership against real PostgreSQL, through the tRPC router: roles set in Ring0
 * survive sign-in, a tenant keeps an admin, invites stay within the tenant's IAM, other tenants'
 * admins get NOT_FOUND, and sessions follow the membership.
 */
import { randomBytes } from "node:crypto";
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sessionUserFromCookieHeader } from "@/server/auth/session";
import type { Ring0Role, SessionUser } from "@/server/core/roles";
import { createPrismaClient, disconnectDb, type PrismaClient, setDatabaseUrl } from "@/server/db/client";
import { registerEmbeddedIam } from "@/server/iam/registry";
import { createUserRepository } from "@/server/users/repository";
import { testDatabaseUrl } from "@/test/integration/database";
import { testCaller, trpcOutcome } from "@/test/integration/trpc";

let db: PrismaClient;
const savedIssuer = process.env.OIDC_ISSUER;

beforeAll(async () => {
  const url = await testDatabaseUrl();
  db = createPrismaClient(url);
  setDatabaseUrl(url);
  delete process.env.OIDC_ISSUER;
});

afterAll(async () => {
  // Other suites of this worker's database count tenants: leave none of ours behind.
  await db.iamAccount.deleteMany({ where: { tenant: { startsWith: "m-" } } });
  await db.user.deleteMany({ where: { tenant: { startsWith: "m-" } } });
  registerEmbeddedIam(null);
  if (savedIssuer !== undefined) process.env.OIDC_ISSUER = savedIssuer;
  await disconnectDb();
  await db.$disconnect();
});

beforeEach(() => registerEmbeddedIam({ issuer: "http://iam.test", seedAccounts: [] }));

/** A fresh tenant per test, so tests never share admins. */
function freshTenant(): string {
  return `m-${randomBytes(4).toString("hex")}`;
}

/** Signs someone in exactly as the next-auth jwt callback does, and returns them as a session user. */
async function signIn(tenant: string, username: string, claimRole: Ring0Role): Promise<SessionUser> {
  const identity = { subject: `${tenant}:${username}`, tenant, name: username, email: null, role: claimRole };
  const user = await createUserRepository(db).recordSignIn(identity, new Date());
  return { id: user.id, subject: identity.subject, name: username, email: null, tenant, role: user.role };
}

const call = (user: SessionUser) => testCaller(user, db, "members-test");

describe("members.setRole", () => {
  it("keeps a Ring0-set role across sign-ins, and a claim-sourced role follows the claim", async () => {
    const tenant = freshTenant();
    const admin = await signIn(tenant, "admin", "tenant-admin");
    const bob = await signIn(tenant, "bob", "tenant-member");

    await call(admin).members.setRole({ tenant, userId: bob.id, role: "tenant-viewer" });
    // The IAM still says member; the Ring0-set role wins.
    const again = await signIn(tenant, "bob", "tenant-member");
    expect(again.role).toBe("tenant-viewer");
    const { members } = await call(admin).members.list({ tenant });
    const row = members.find((member) => member.userId === bob.id);
    expect(row).toMatchObject({ role: "tenant-viewer", roleSource: "ring0", roleSetBy: "admin" });
    expect(row?.roleSetAt).toBeInstanceOf(Date);

    // The admin's own role is still claim-sourced and follows the IAM.
    expect(members.find((member) => member.userId === admin.id)?.roleSource).toBe("iam");

    const audit = await db.auditEvent.findFirst({ where: { tenant, action: "member.role-set" } });
    expect(audit).toMatchObject({ actorName: "admin", target: `${tenant}:bob`, result: "success" });
    expect(audit?.detail).toEqual({ from: "tenant-member", to: "tenant-viewer" });
  });

  it("applies a role change on the very next request of an existing session", async () => {
    const tenant = freshTenant();
    const admin = await signIn(tenant, "admin", "tenant-admin");
    const bob = await signIn(tenant, "bob", "tenant-admin");
    process.env.NEXTAUTH_SECRET ??= "a-test-secret-that-is-long-enough-to-use-0123456789";
    const cookie = `next-auth.session-token=${await encode({
      token: { uid: bob.id, subject: bob.subject, tenant, role: "tenant-admin", name: "bob" },
      secret: process.env.NEXTAUTH_SECRET,
    })}`;
    expect((await sessionUserFromCookieHeader(cookie))?.role).toBe("tenant-admin");
    await call(admin).members.setRole({ tenant, userId: bob.id, role: "tenant-member" });
    expect((await sessionUserFromCookieHeader(cookie))?.role).toBe("tenant-member");
    await call(admin).members.remove({ tenant, userId: bob.id });
    expect(await sessionUserFromCookieHeader(cookie)).toBeNull();
  });

  it("refuses to demote or remove the last admin, the admin themselves included", async () => {
    const tenant = freshTenant();
    const admin = await signIn(tenant, "admin", "tenant-admin");
    const [code, message] = await trpcOutcome(
      call(admin).members.setRole({ tenant, userId: admin.id, role: "tenant-member" }),
    );
    expect(code).toBe("CONFLICT");
    expect(message).toMatch(/last admin of tenant/);
    expect((await trpcOutcome(call(admin).members.remove({ tenant, userId: admin.id })))[0]).toBe("CONFLICT");

    // With a second admin, the first may step down.
    const second = await signIn(tenant, "second", "tenant-member");
    await call(admin).members.setRole({ tenant, userId: second.id, role: "tenant-admin" });
    await call(admin).members.setRole({ tenant, userId: admin.id, role: "tenant-member" });
    expect(await createUserRepository(db).membershipRole(admin.id, tenant)).toBe("tenant-member");
  });

  it("answers NOT_FOUND to another tenant's admin and FORBIDDEN to a plain member", async () => {
    const tenant = freshTenant();
    const admin = await signIn(tenant, "admin", "tenant-admin");
    const member = await signIn(tenant, "member", "tenant-member");
    const stranger = await signIn(freshTenant(), "admin", "tenant-admin");
    const input = { tenant, userId: member.id, role: "tenant-admin" as const };
    expect((await trpcOutcome(call(stranger).members.setRole(input)))[0]).toBe("NOT_FOUND");
    expect((await trpcOutcome(call(stranger).members.list({ tenant })))[0]).toBe("NOT_FOUND");
    expect((await trpcOutcome(call(stranger).accounts.list({ tenant })))[0]).toBe("NOT_FOUND");
    expect((await trpcOutcome(call(member).members.setRole(input)))[0]).toBe("FORBIDDEN");
    expect((await trpcOutcome(call(member).members.remove({ tenant, userId: admin.id })))[0]).toBe(
      "FORBIDDEN",
    );
  });

  it("names the field of bad input", async () => {
    const tenant = freshTenant();
    const admin = await signIn(tenant, "admin", "tenant-admin");
    const [code, message] = await trpcOutcome(
      call(admin).members.setRole({ tenant, userId: admin.id, role: "operator" as never }),
    );
    expect(code).toBe("BAD_REQUEST");
    expect(message).toMatch(/role: expected one of tenant-admin, tenant-member, tenant-viewer/);
  });
});

describe("members.invite and members.remove", () => {
  it("invites only accounts of the same tenant (embedded IAM), and removal sticks across sign-ins", async () => {
    const tenant = freshTenant();
    const other = freshTenant();
    const admin = await signIn(tenant, "admin", "tenant-admin");
    // A created account of the same tenant, then one of another tenant.
    await call(admin).accounts.create({
      tenant,
      username: "carol",
      name: "Carol",
      email: `carol@${tenant}.example`,
      role: "tenant-member",
    });
    const otherAdmin = await signIn(other, "admin", "tenant-admin");
    await call(otherAdmin).accounts.create({
      tenant: other,
      username: "dave",
      name: "Dave",
      email: `dave@${other}.example`,
      role: "tenant-member",
    });

    const [code, message] = await trpcOutcome(
      call(admin).members.invite({ tenant, username: "dave", role: "tenant-viewer" }),
    );
    expect(code).toBe("NOT_FOUND");
    expect(message).toMatch(/^username: no enabled account "dave"/);
    expect(
      (
        await trpcOutcome(call(admin).members.invite({ tenant, username: "carol", role: "tenant-viewer" }))
      )[0],
    ).toBe("CONFLICT");

    const carol = (await call(admin).members.list({ tenant })).members.find(
      (member) => member.name === "Carol",
    );
    expect(carol).toBeDefined();
    await call(admin).members.remove({ tenant, userId: carol?.userId ?? "" });
    expect((await call(admin).members.list({ tenant })).members.map((member) => member.name)).not.toContain(
      "Carol",
    );
    // Signing in again does not bring a removed member back.
    const repository = createUserRepository(db);
    expect(await repository.signInRefusal(`${tenant}:carol`, tenant)).toBe("removed");
    await repository.recordSignIn(
      { subject: `${tenant}:carol`, tenant, name: "Carol", email: null, role: "tenant-admin" },
      new Date(),
    );
    expect(await repository.membershipRole(carol?.userId ?? "", tenant)).toBeNull();

    // An invite brings them back with the chosen role.
    await call(admin).members.invite({ tenant, username: "carol", role: "tenant-viewer" });
    expect(await repository.membershipRole(carol?.userId ?? "", tenant)).toBe("tenant-viewer");
    expect(await repository.signInRefusal(`${tenant}:carol`, tenant)).toBeNull();

    const actions = (await db.auditEvent.findMany({ where: { tenant }, select: { action: true } })).map(
      (event) => event.action,
    );
    expect(actions).toEqual(expect.arrayContaining(["account.create", "member.remove", "member.invite"]));
  });

  it("with an external IAM invites only users of the tenant who signed in before", async () => {
    registerEmbeddedIam(null);
    const tenant = freshTenant();
    const admin = await signIn(tenant, "admin", "tenant-admin");
    const outsider = freshTenant();
    await signIn(outsider, "erin", "tenant-member");
    const [code, message] = await trpcOutcome(
      call(admin).members.invite({ tenant, username: `${outsider}:erin`, role: "tenant-member" }),
    );
    expect(code).toBe("NOT_FOUND");
    expect(message).toMatch(/has signed in to Ring0 yet/);

    const frank = await signIn(tenant, "frank", "tenant-member");
    await call(admin).members.remove({ tenant, userId: frank.id });
    await call(admin).members.invite({ tenant, username: frank.subject, role: "tenant-admin" });
    expect(await createUserRepository(db).membershipRole(frank.id, tenant)).toBe("tenant-admin");
    expect((await call(admin).members.list({ tenant })).iam.kind).toBe("external");
  });
});
