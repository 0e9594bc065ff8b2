/**
 * Tenant membership managed in Ring0: list, set a member's role (kept across sign-ins), invite a
 * person of the tenant's IAM, remove. Callers have passed the tRPC tier and `isTenantAdmin`;
 * this layer keeps the invariants (a tenant keeps an admin, invitees belong to the tenant) and
 * audits every change.
 */
import { auditAs } from "@/server/audit/service";
import type { Ring0Role, SessionUser } from "@/server/core/roles";
import type { PrismaClient } from "@/server/db/client";
import { NotFoundError } from "@/server/errors";
import { createIamAccountRepository } from "@/server/iam/account-repository";
import { subjectFor } from "@/server/iam/accounts";
import { embeddedIam } from "@/server/iam/registry";
import { createUserRepository, type NewMember } from "@/server/users/repository";

export interface MembersServiceOptions {
  db: PrismaClient;
  now?: () => Date;
}

/** How people get into a tenant: accounts of the embedded IAM, or users of an external IAM. */
export interface IamMode {
  kind: "embedded" | "external";
  /** The external IAM's issuer, for "manage accounts there" messages. */
  issuer: string | null;
}

export function currentIamMode(): IamMode {
  return embeddedIam()
    ? { kind: "embedded", issuer: null }
    : { kind: "external", issuer: process.env.OIDC_ISSUER ?? null };
}

export function createMembersService({ db, now = () => new Date() }: MembersServiceOptions) {
  const users = createUserRepository(db);

  /** Records a change made by `actor` in `tenant` (the tenant's admins read it). */
  const audit = (
    actor: SessionUser,
    tenant: string,
    action: string,
    target: string,
    requestId: string | undefined,
    detail: Record<string, unknown>,
  ) =>
    auditAs({ user: actor, requestId, db })({
      tenant,
      action,
      targetKind: "Member",
      target,
      detail,
    });

  /** The person an invite names, if the tenant's IAM knows them. */
  async function findInvitee(tenant: string, login: string): Promise<NewMember | null> {
    const embedded = embeddedIam();
    if (!embedded) {
      const user = await users.findTenantUser(tenant, login);
      return user ? { subject: user.subject, tenant, name: user.name, email: user.email } : null;
    }
    const username = login.trim().toLowerCase();
    const seeded = embedded.seedAccounts.find(
      (account) => account.tenant === tenant && account.username === username,
    );
    if (seeded) return { subject: seeded.sub, tenant, name: seeded.name, email: seeded.email };
    const stored = await createIamAccountRepository(db).find(tenant, username);
    if (!stored || stored.disabled) return null;
    return { subject: subjectFor(tenant, username), tenant, name: stored.name, email: stored.email };
  }

  return {
    list: (tenant: string) => users.members(tenant),

    async setRole(actor: SessionUser, tenant: string, userId: string, role: Ring0Role, requestId?: string) {
      const changed = await users.setRole(tenant, userId, role, actor.name, now());
      await audit(actor, tenant, "member.role-set", changed.subject, requestId, {
        from: changed.previous,
        to: role,
      });
      return { userId, name: changed.name, role };
    },

    async invite(actor: SessionUser, tenant: string, login: string, role: Ring0Role, requestId?: string) {
      const invitee = await findInvitee(tenant, login);
      if (!invitee) {
        throw new NotFoundError(
          embeddedIam()
            ? `username: no enabled account "${login}" in tenant "${tenant}". Create the account first.`
            : `username: nobody of tenant "${tenant}" with subject or email "${login}" has signed in to Ring0 yet. They appear after their first sign-in through your IAM.`,
        );
      }
      const added = await users.addMember(invitee, role, actor.name, now());
      await audit(actor, tenant, "member.invite", added.subject, requestId, { role });
      return { userId: added.userId, name: added.name, role };
    },

    async remove(actor: SessionUser, tenant: string, userId: string, requestId?: string) {
      const removed = await users.removeMember(tenant, userId, actor.name, now());
      await audit(actor, tenant, "member.remove", removed.subject, requestId, { role: removed.role });
      return { userId, name: removed.name };
    },
  };
}
