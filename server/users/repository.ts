import type { Ring0Role } from "@/server/core/roles";
import type { PrismaClient } from "@/server/db/client";
import { ConflictError, NotFoundError } from "@/server/errors";

/** Prisma's enum names for Ring0's roles (the database stores the dashed names). */
const toDbRole = {
  operator: "operator",
  "tenant-admin": "tenant_admin",
  "tenant-member": "tenant_member",
  "tenant-viewer": "tenant_viewer",
} as const;
type DbRole = (typeof toDbRole)[Ring0Role];

export { toDbRole };
export const fromDbRole = Object.fromEntries(
  Object.entries(toDbRole).map(([role, db]) => [db, role]),
) as Record<DbRole, Ring0Role>;

export interface SignedInIdentity {
  subject: string;
  tenant: string;
  name: string;
  email: string | null;
  role: Ring0Role;
}

export type RoleSource = "iam" | "ring0";

export interface MemberRow {
  userId: string;
  subject: string;
  name: string;
  email: string | null;
  role: Ring0Role;
  /** `iam`: follows the IAM's claims on every sign-in; `ring0`: set in Ring0 and kept. */
  roleSource: RoleSource;
  roleSetBy: string | null;
  roleSetAt: Date | null;
  lastLoginAt: Date | null;
  /** The user's embedded-IAM account is disabled; the membership grants nothing meanwhile. */
  disabled: boolean;
}

/** Why a sign-in is refused although the IAM vouched for the user, or null. */
export type SignInRefusal = "removed" | "disabled" | null;

/** A membership that grants access: not removed, and its user not disabled. */
const grantsAccess = { removedAt: null, user: { disabledAt: null } } as const;

export interface TenantSummary {
  tenant: string;
  members: number;
  admins: number;
  lastLoginAt: Date | null;
}

/** Someone of the tenant's IAM about to become a member. */
export interface NewMember {
  subject: string;
  tenant: string;
  name: string;
  email: string | null;
}

type Transaction = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

async function lockTenantMemberships(tx: Transaction, tenant: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM memberships WHERE tenant = ${tenant} FOR UPDATE`;
}

async function activeMembership(tx: Transaction, tenant: string, userId: string) {
  const membership = await tx.membership.findFirst({
    where: { tenant, userId, removedAt: null },
    include: { user: { select: { name: true, subject: true, disabledAt: true } } },
  });
  if (!membership) throw new NotFoundError(`No member ${userId} in tenant "${tenant}".`);
  return membership;
}

/** Refuses to take away the tenant's last admin who can still sign in. */
async function refuseLastAdmin(
  tx: Transaction,
  tenant: string,
  membership: { userId: string; user: { name: string; disabledAt: Date | null } },
  change: "demote" | "remove",
): Promise<void> {
  if (membership.user.disabledAt) return;
  const admins = await tx.membership.count({
    where: { tenant, role: "tenant_admin", ...grantsAccess, NOT: { userId: membership.userId } },
  });
  if (admins > 0) return;
  throw new ConflictError(
    `${membership.user.name} is the last admin of tenant "${tenant}"; make another member an admin before you ${change === "demote" ? "change this role" : "remove them"}.`,
  );
}

export function createUserRepository(db: PrismaClient) {
  return {
    /**
     * Upserts the user and their membership in the IAM's tenant, in one transaction, and returns
     * the user with the role they now hold there. The claim's role applies unless a tenant admin
     * set the role in Ring0 (`roleSource: ring0`), which sign-in keeps; an operator claim always
     * applies. A removed membership stays removed (the sign-in callback refuses such users first).
     */
    async recordSignIn(identity: SignedInIdentity, at: Date) {
      return db.$transaction(async (tx) => {
        const user = await tx.user.upsert({
          where: { subject: identity.subject },
          create: {
            subject: identity.subject,
            tenant: identity.tenant,
            name: identity.name,
            email: identity.email,
            lastLoginAt: at,
          },
          update: { tenant: identity.tenant, name: identity.name, email: identity.email, lastLoginAt: at },
        });
        const key = { userId_tenant: { userId: user.id, tenant: identity.tenant } };
        const existing = await tx.membership.findUnique({ where: key });
        const keepRing0Role = existing?.roleSource === "ring0" && identity.role !== "operator";
        let role: Ring0Role = identity.role;
        if (!existing) {
          await tx.membership.create({
            data: { userId: user.id, tenant: identity.tenant, role: toDbRole[identity.role] },
          });
        } else if (keepRing0Role) {
          role = fromDbRole[existing.role as DbRole];
        } else {
          await tx.membership.update({
            where: key,
            data: { role: toDbRole[identity.role], roleSource: "iam", roleSetBy: null, roleSetAt: null },
          });
        }
        return { ...user, role, roleSource: (keepRing0Role ? "ring0" : "iam") as RoleSource };
      });
    },

    /** Whether Ring0 refuses a sign-in the IAM accepted: the member was removed or is disabled. */
    async signInRefusal(subject: string, tenant: string): Promise<SignInRefusal> {
      const user = await db.user.findUnique({
        where: { subject },
        select: { disabledAt: true, memberships: { where: { tenant }, select: { removedAt: true } } },
      });
      if (!user) return null;
      if (user.disabledAt) return "disabled";
      if (user.memberships[0]?.removedAt) return "removed";
      return null;
    },

    /** The role a membership grants now, or null (none, removed, or the user is disabled). */
    async membershipRole(userId: string, tenant: string): Promise<Ring0Role | null> {
      const membership = await db.membership.findFirst({
        where: { userId, tenant, ...grantsAccess },
        select: { role: true },
      });
      return membership ? fromDbRole[membership.role as DbRole] : null;
    },

    /** Current members (removed ones left out; disabled ones shown as such). */
    async members(tenant: string): Promise<MemberRow[]> {
      const rows = await db.membership.findMany({
        where: { tenant, removedAt: null },
        include: {
          user: { select: { subject: true, name: true, email: true, lastLoginAt: true, disabledAt: true } },
        },
        orderBy: [{ role: "asc" }, { user: { name: "asc" } }],
      });
      return rows.map((row) => ({
        userId: row.userId,
        subject: row.user.subject,
        name: row.user.name,
        email: row.user.email,
        role: fromDbRole[row.role as DbRole],
        roleSource: row.roleSource,
        roleSetBy: row.roleSetBy,
        roleSetAt: row.roleSetAt,
        lastLoginAt: row.user.lastLoginAt,
        disabled: row.user.disabledAt !== null,
      }));
    },

    /**
     * Sets a member's role as Ring0-managed (kept across sign-ins). Refuses to leave the tenant
     * without an admin; concurrent changes in one tenant are serialised by row locks.
     */
    async setRole(tenant: string, userId: string, role: Ring0Role, setBy: string, at: Date) {
      return db.$transaction(async (tx) => {
        await lockTenantMemberships(tx, tenant);
        const membership = await activeMembership(tx, tenant, userId);
        const previous = fromDbRole[membership.role as DbRole];
        if (previous === "operator" || role === "operator") {
          throw new ConflictError("Operator roles come from the IAM and cannot be changed in Ring0.");
        }
        if (previous === "tenant-admin" && role !== "tenant-admin")
          await refuseLastAdmin(tx, tenant, membership, "demote");
        await tx.membership.update({
          where: { id: membership.id },
          data: { role: toDbRole[role], roleSource: "ring0", roleSetBy: setBy, roleSetAt: at },
        });
        return { previous, role, name: membership.user.name, subject: membership.user.subject };
      });
    },

    /** Marks a membership removed (kept as a tombstone so sign-in does not re-add it). */
    async removeMember(tenant: string, userId: string, removedBy: string, at: Date) {
      return db.$transaction(async (tx) => {
        await lockTenantMemberships(tx, tenant);
        const membership = await activeMembership(tx, tenant, userId);
        const role = fromDbRole[membership.role as DbRole];
        if (role === "operator") {
          throw new ConflictError("Operators come from the IAM and cannot be removed in Ring0.");
        }
        if (role === "tenant-admin") await refuseLastAdmin(tx, tenant, membership, "remove");
        await tx.membership.update({
          where: { id: membership.id },
          data: { removedAt: at, roleSource: "ring0", roleSetBy: removedBy, roleSetAt: at },
        });
        return { role, name: membership.user.name, subject: membership.user.subject };
      });
    },

    /**
     * Makes a person of the tenant's IAM a member with a Ring0-managed role: creates the user when
     * they never signed in, restores a removed membership, refuses a current member.
     */
    async addMember(person: NewMember, role: Ring0Role, setBy: string, at: Date) {
      return db.$transaction(async (tx) => {
        await lockTenantMemberships(tx, person.tenant);
        const user = await tx.user.upsert({
          where: { subject: person.subject },
          create: { subject: person.subject, tenant: person.tenant, name: person.name, email: person.email },
          update: {},
        });
        if (user.tenant !== person.tenant) {
          throw new NotFoundError(`No user "${person.subject}" in tenant "${person.tenant}".`);
        }
        const key = { userId_tenant: { userId: user.id, tenant: person.tenant } };
        const existing = await tx.membership.findUnique({ where: key });
        if (existing && existing.removedAt === null) {
          throw new ConflictError(`${user.name} is already a member of tenant "${person.tenant}".`);
        }
        const data = { role: toDbRole[role], roleSource: "ring0", roleSetBy: setBy, roleSetAt: at } as const;
        await tx.membership.upsert({
          where: key,
          create: { userId: user.id, tenant: person.tenant, ...data },
          update: { ...data, removedAt: null },
        });
        return { userId: user.id, name: user.name, subject: user.subject };
      });
    },

    /** A user of `tenant` (signed in before) by subject or email, for invites with an external IAM. */
    async findTenantUser(tenant: string, login: string) {
      return db.user.findFirst({
        where: {
          tenant,
          OR: [{ subject: login }, { email: { equals: login, mode: "insensitive" } }],
        },
        select: { id: true, subject: true, name: true, email: true },
      });
    },

    /** Starts or ends a user's disablement (their memberships grant nothing while it lasts). */
    async setUserDisabled(subject: string, disabledAt: Date | null) {
      await db.user.updateMany({ where: { subject }, data: { disabledAt } });
    },

    /** Tenants known from memberships (the Tenant CRD becomes the source of truth in a later issue). */
    async tenantSummaries(): Promise<TenantSummary[]> {
      const rows = await db.membership.findMany({
        where: grantsAccess,
        select: { tenant: true, role: true, user: { select: { lastLoginAt: true } } },
      });
      const byTenant = new Map<string, TenantSummary>();
      for (const row of rows) {
        const summary = byTenant.get(row.tenant) ?? {
          tenant: row.tenant,
          members: 0,
          admins: 0,
          lastLoginAt: null,
        };
        summary.members += 1;
        if (row.role === "tenant_admin") summary.admins += 1;
        const last = row.user.lastLoginAt;
        if (last && (!summary.lastLoginAt || last > summary.lastLoginAt)) summary.lastLoginAt = last;
        byTenant.set(row.tenant, summary);
      }
      return [...byTenant.values()].sort((a, b) => a.tenant.localeCompare(b.tenant));
    },
  };
}

export type UserRepository = ReturnType<typeof createUserRepository>;
