/**
 * For integration tests: tRPC callers for a given user, the outcome of a call as a code, and the
 * demo people most suites sign in (the worker's database is shared by test files, so they all
 * seed the same people).
 */
import { TRPCError } from "@trpc/server";
import { createCaller } from "@/server/api/root";
import type { SessionUser } from "@/server/core/roles";
import type { PrismaClient } from "@/server/db/client";
import { createLogger } from "@/server/logger";
import { createUserRepository } from "@/server/users/repository";

/** A caller as `user`; procedures that never touch ctx.db may leave `db` out. */
export function testCaller(user: SessionUser | null, db: PrismaClient = null as never, requestId = "test") {
  return createCaller({ user, db, requestId, logger: createLogger({}, "error") });
}

/** `["OK", ""]`, or the tRPC error's code and message; anything else is rethrown. */
export async function trpcOutcome(promise: Promise<unknown>): Promise<[string, string]> {
  try {
    await promise;
    return ["OK", ""];
  } catch (error) {
    if (error instanceof TRPCError) return [error.code, error.message];
    throw error;
  }
}

export async function trpcCode(promise: Promise<unknown>): Promise<string> {
  return (await trpcOutcome(promise))[0];
}

export const demoIdentities = [
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

export type DemoKey = (typeof demoIdentities)[number]["key"];

/** Signs the demo people in (users + memberships upserted) and returns them as session users. */
export async function seedDemoUsers(db: PrismaClient): Promise<Record<DemoKey, SessionUser>> {
  const repository = createUserRepository(db);
  const users = {} as Record<DemoKey, SessionUser>;
  for (const identity of demoIdentities) {
    const user = await repository.recordSignIn({ ...identity, email: null }, new Date());
    users[identity.key] = {
      id: user.id,
      subject: identity.subject,
      name: identity.name,
      email: null,
      tenant: identity.tenant,
      role: identity.role,
    };
  }
  return users;
}

/**
 * The operator the tenant router suites act as. Its id is a placeholder until it signs in
 * (setUpTenantSuite): audit events reference their actor.
 */
export function testOperator(): SessionUser {
  return {
    id: "op",
    subject: "system:operator",
    name: "Olivia",
    email: null,
    tenant: "system",
    role: "operator",
  };
}

/** acme's admin, never signed in: for procedures that refuse tenant users before any write. */
export function testTenantAdmin(): SessionUser {
  return { ...testOperator(), id: "a", subject: "acme:acme-admin", tenant: "acme", role: "tenant-admin" };
}
