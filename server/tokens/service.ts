/**
 * Issuing, verifying, listing and revoking Ring0 API tokens. The plaintext exists only in the
 * return value of `issueToken`; it is never stored, logged or audited.
 */
import { recordAudit } from "@/server/audit/service";
import type { SessionUser } from "@/server/core/roles";
import type { PrismaClient } from "@/server/db/client";
import { InvalidInputError, NotFoundError } from "@/server/errors";
import { tenantForUser } from "@/server/tenants/access";
import { generateToken, hashToken, isWellFormedToken, sameHash, tokenPrefix } from "@/server/tokens/format";
import {
  canFilterTokensBy,
  canIssueTokenFor,
  canManageToken,
  lastUsedResolutionMs,
  maxTokenLifetimeDays,
  shouldRecordUse,
  tokenVisibility,
} from "@/server/tokens/policy";
import { createTokenRepository, type TokenRow } from "@/server/tokens/repository";
import { createUserRepository } from "@/server/users/repository";

export type { TokenRow } from "@/server/tokens/repository";

const dayMs = 24 * 60 * 60 * 1000;

export interface TokenServiceOptions {
  db: PrismaClient;
  /** Injected so tests can move time (expiry, last-used throttling). */
  now?: () => Date;
}

export interface IssueTokenInput {
  user: SessionUser;
  tenant: string;
  name: string;
  expiresInDays: number;
  requestId?: string;
}

export interface IssuedToken {
  /** The only time the plaintext is available. */
  plaintext: string;
  token: TokenRow;
}

export interface VerifiedToken {
  token: TokenRow;
  /** The owner as a session user, with their current role. */
  user: SessionUser;
}

export function createTokenService({ db, now = () => new Date() }: TokenServiceOptions) {
  const tokens = createTokenRepository(db);
  const users = createUserRepository(db);

  async function visibleToken(user: SessionUser, id: string): Promise<TokenRow> {
    const token = await tokens.findById(id);
    // Tokens the caller may not see read exactly like tokens that do not exist.
    if (!token || !canManageToken(user, token)) throw new NotFoundError(`API token "${id}" was not found.`);
    return token;
  }

  return {
    async issueToken({
      user,
      tenant,
      name,
      expiresInDays,
      requestId,
    }: IssueTokenInput): Promise<IssuedToken> {
      const label = name.trim();
      if (label.length < 1 || label.length > 64) {
        throw new InvalidInputError("name: expected 1 to 64 characters.");
      }
      if (!Number.isInteger(expiresInDays) || expiresInDays < 1 || expiresInDays > maxTokenLifetimeDays) {
        throw new InvalidInputError(
          `expiresInDays: expected a whole number from 1 to ${maxTokenLifetimeDays}.`,
        );
      }
      if (!canIssueTokenFor(user, tenant) || !(await tenantForUser(user, tenant, db))) {
        throw new NotFoundError(`Tenant "${tenant}" was not found.`);
      }
      const plaintext = generateToken();
      const token = await tokens.create({
        userId: user.id,
        tenant,
        name: label,
        prefix: tokenPrefix(plaintext),
        hash: hashToken(plaintext),
        expiresAt: new Date(now().getTime() + expiresInDays * dayMs),
      });
      await recordAudit({
        actorId: user.id,
        actorName: user.name,
        actorTenant: user.tenant,
        tenant,
        action: "token.issue",
        targetKind: "api-token",
        target: token.prefix,
        result: "success",
        requestId: requestId ?? null,
        detail: { id: token.id, name: token.name, expiresAt: token.expiresAt.toISOString() },
      });
      return { plaintext, token };
    },

    /**
     * The token and its owner, or null for anything that does not grant access right now: malformed,
     * unknown, revoked, expired, or an owner who no longer belongs to the token's tenant.
     */
    async verifyToken(plaintext: string): Promise<VerifiedToken | null> {
      if (!isWellFormedToken(plaintext)) return null;
      const hash = hashToken(plaintext);
      const found = await tokens.findByHash(hash);
      if (!found || !sameHash(found.hash, hash)) return null;
      const at = now();
      if (found.revokedAt || found.expiresAt.getTime() <= at.getTime()) return null;

      const role = await users.membershipRole(found.owner.id, found.owner.tenant);
      if (!role) return null;
      const user: SessionUser = { ...found.owner, role };
      if (!(await tenantForUser(user, found.tenant, db))) return null;

      const { hash: _hash, owner: _owner, ...token } = found;
      if (shouldRecordUse(found.lastUsedAt, at)) {
        const recorded = await tokens.recordUse(found.id, at, new Date(at.getTime() - lastUsedResolutionMs));
        if (recorded) token.lastUsedAt = at;
      }
      return { token, user };
    },

    /** The tokens the user may see, optionally of one tenant (a tenant they cannot reach is not found). */
    async listTokens({ user, tenant }: { user: SessionUser; tenant?: string }): Promise<TokenRow[]> {
      if (tenant !== undefined && !canFilterTokensBy(user, tenant)) {
        throw new NotFoundError(`Tenant "${tenant}" was not found.`);
      }
      return tokens.list(tokenVisibility(user), tenant);
    },

    /** Idempotent: revoking a revoked token returns it unchanged and records nothing new. */
    async revokeToken(id: string, by: SessionUser, requestId?: string): Promise<TokenRow> {
      const token = await visibleToken(by, id);
      const at = now();
      if (!(await tokens.revoke(id, at, by.name))) return (await tokens.findById(id)) ?? token;
      await recordAudit({
        actorId: by.id,
        actorName: by.name,
        actorTenant: by.tenant,
        tenant: token.tenant,
        action: "token.revoke",
        targetKind: "api-token",
        target: token.prefix,
        result: "success",
        requestId: requestId ?? null,
        detail: { id: token.id, name: token.name, owner: token.ownerName },
      });
      return { ...token, revokedAt: at, revokedBy: by.name };
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
