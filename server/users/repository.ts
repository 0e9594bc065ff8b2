import type { Ring0Role } from "@/server/auth/roles";
import type { PrismaClient } from "@/server/db/client";

/** Prisma's enum names for Ring0's roles (the database stores the dashed names). */
const toDbRole = {
  operator: "operator",
  "tenant-admin": "tenant_admin",
  "tenant-member": "tenant_member",
  "tenant-viewer": "tenant_viewer",
} as const;
type DbRole = (typeof toDbRole)[Ring0Role];
const fromDbRole = Object.fromEntries(Object.entries(toDbRole).map(([role, db]) => [db, role])) as Record<
  DbRole,
  Ring0Role
>;

export interface SignedInIdentity {
  subject: string;
  tenant: string;
  name: string;
  email: string | null;
  role: Ring0Role;
}

export interface MemberRow {
  userId: string;
  name: string;
  email: string | null;
  role: Ring0Role;
  lastLoginAt: Date | null;
}

export interface TenantSummary {
  tenant: string;
  members: number;
  admins: number;
  lastLoginAt: Date | null;
}

export function createUserRepository(db: PrismaClient) {
  return {
    /** Upserts the user and their membership in the IAM's tenant, in one transaction. */
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
        await tx.membership.upsert({
          where: { userId_tenant: { userId: user.id, tenant: identity.tenant } },
          create: { userId: user.id, tenant: identity.tenant, role: toDbRole[identity.role] },
          update: { role: toDbRole[identity.role] },
        });
        return user;
      });
    },

    async membershipRole(userId: string, tenant: string): Promise<Ring0Role | null> {
      const membership = await db.membership.findUnique({
        where: { userId_tenant: { userId, tenant } },
        select: { role: true },
      });
      return membership ? fromDbRole[membership.role as DbRole] : null;
    },

    async members(tenant: string): Promise<MemberRow[]> {
      const rows = await db.membership.findMany({
        where: { tenant },
        include: { user: { select: { name: true, email: true, lastLoginAt: true } } },
        orderBy: [{ role: "asc" }, { user: { name: "asc" } }],
      });
      return rows.map((row) => ({
        userId: row.userId,
        name: row.user.name,
        email: row.user.email,
        role: fromDbRole[row.role as DbRole],
        lastLoginAt: row.user.lastLoginAt,
      }));
    },

    /** Tenants known from memberships (the Tenant CRD becomes the source of truth in a later issue). */
    async tenantSummaries(): Promise<TenantSummary[]> {
      const rows = await db.membership.findMany({
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
