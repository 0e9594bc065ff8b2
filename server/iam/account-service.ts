/**
 * Embedded-IAM accounts that tenant admins manage from the portal: create (with a one-time
 * temporary password and a Ring0-managed membership), disable and enable. The temporary password
 * is generated here, returned once and otherwise only ever exists as its scrypt hash: it is never
 * stored, logged or audited. With an external IAM every operation is refused.
 */
import { randomBytes } from "node:crypto";
import { auditAs } from "@/server/audit/service";
import type { Ring0Role, SessionUser } from "@/server/core/roles";
import type { PrismaClient } from "@/server/db/client";
import { ConflictError, ForbiddenError, NotFoundError } from "@/server/errors";
import { createUserRepository } from "@/server/users/repository";
import { createIamAccountRepository } from "./account-repository";
import { hashPassword, subjectFor } from "./accounts";
import { embeddedIam } from "./registry";

export interface NewAccount {
  username: string;
  name: string;
  email: string;
  role: Exclude<Ring0Role, "operator">;
}

/** 18 random bytes: 24 base64url characters, 144 bits. */
export function generateTemporaryPassword(): string {
  return randomBytes(18).toString("base64url");
}

export function externalIamRefusal(): ForbiddenError {
  const issuer = process.env.OIDC_ISSUER;
  return new ForbiddenError(
    `Accounts are managed in your identity provider${issuer ? ` (${issuer})` : ""}, not in Ring0: create, disable and enable people there.`,
  );
}

/** Refuses unless the embedded IAM is Ring0's identity provider; returns its registration. */
export function requireEmbeddedIam() {
  const embedded = embeddedIam();
  if (!embedded) throw externalIamRefusal();
  return embedded;
}

export function createAccountService({ db, now = () => new Date() }: { db: PrismaClient; now?: () => Date }) {
  const accounts = createIamAccountRepository(db);
  const users = createUserRepository(db);

  /** Records a change made by `actor` in `tenant` (the tenant's admins read it). */
  const audit = (
    actor: SessionUser,
    tenant: string,
    action: string,
    username: string,
    requestId: string | undefined,
    detail?: Record<string, unknown>,
  ) =>
    auditAs({ user: actor, requestId, db })({
      tenant,
      action,
      targetKind: "Account",
      target: subjectFor(tenant, username),
      detail,
    });

  return {
    async list(tenant: string) {
      requireEmbeddedIam();
      return accounts.list(tenant);
    },

    /** Checks what can be checked before anything is created (the tenant create path calls this first). */
    assertCanCreate(username: string) {
      const embedded = requireEmbeddedIam();
      if (embedded.seedAccounts.some((account) => account.username === username)) {
        throw new ConflictError(`username: "${username}" is already taken by a built-in account.`);
      }
    },

    /** Creates the account and its membership; the temporary password is in the result only. */
    async create(actor: SessionUser, tenant: string, input: NewAccount, requestId?: string) {
      this.assertCanCreate(input.username);
      const temporaryPassword = generateTemporaryPassword();
      const account = await accounts.create({
        tenant,
        username: input.username,
        name: input.name,
        email: input.email,
        passwordHash: await hashPassword(temporaryPassword),
        createdBy: actor.name,
      });
      const at = now();
      await users.addMember(
        { subject: subjectFor(tenant, input.username), tenant, name: input.name, email: input.email },
        input.role,
        actor.name,
        at,
      );
      await audit(actor, tenant, "account.create", input.username, requestId, { role: input.role });
      return { account, temporaryPassword };
    },

    /**
     * Disabling refuses the account at the IAM's login page and ends its Ring0 access at once
     * (sessions, portal and API tokens all resolve the membership through the user's disabledAt).
     */
    async setDisabled(
      actor: SessionUser,
      tenant: string,
      username: string,
      disabled: boolean,
      requestId?: string,
    ) {
      requireEmbeddedIam();
      const subject = subjectFor(tenant, username);
      if (disabled && subject === actor.subject) {
        throw new ConflictError("You cannot disable your own account.");
      }
      if (disabled) await refuseDisablingLastAdmin(db, tenant, subject);
      const at = now();
      const account = await accounts.setDisabled(tenant, username, disabled, actor.name, at);
      if (!account) throw new NotFoundError(`username: no account "${username}" in tenant "${tenant}".`);
      await users.setUserDisabled(subject, disabled ? at : null);
      await audit(actor, tenant, disabled ? "account.disable" : "account.enable", username, requestId);
      return account;
    },
  };
}

async function refuseDisablingLastAdmin(db: PrismaClient, tenant: string, subject: string): Promise<void> {
  const members = await createUserRepository(db).members(tenant);
  const target = members.find((member) => member.subject === subject);
  if (!target || target.disabled || target.role !== "tenant-admin") return;
  const others = members.filter((member) => member.role === "tenant-admin" && !member.disabled).length - 1;
  if (others <= 0) {
    throw new ConflictError(
      `${target.name} is the last admin of tenant "${tenant}"; make another member an admin before you disable this account.`,
    );
  }
}
