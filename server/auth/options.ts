import type { AuthOptions } from "next-auth";
import type { OAuthConfig } from "next-auth/providers/oauth";
import { recordAudit } from "@/server/audit/service";
import { identityFromClaims } from "@/server/auth/identity";
import { sessionUserFromToken } from "@/server/auth/session";
import type { Ring0Role, SessionUser } from "@/server/core/roles";
import { getDb } from "@/server/db/client";
import { env } from "@/server/env";
import { logger } from "@/server/logger";
import { createUserRepository } from "@/server/users/repository";

export const providerId = "ring0-iam";
const sessionMaxAgeSeconds = 8 * 60 * 60;

interface Ring0Profile extends Record<string, unknown> {
  sub: string;
}

function iamProvider(): OAuthConfig<Ring0Profile> {
  const config = env();
  if (!config.OIDC_ISSUER || !config.OIDC_CLIENT_ID || !config.OIDC_CLIENT_SECRET) {
    throw new Error("OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET must be set before auth is used");
  }
  const issuer = config.OIDC_ISSUER.replace(/\/$/, "");
  return {
    id: providerId,
    name: config.OIDC_DISPLAY_NAME,
    type: "oauth",
    wellKnown: `${issuer}/.well-known/openid-configuration`,
    issuer,
    clientId: config.OIDC_CLIENT_ID,
    clientSecret: config.OIDC_CLIENT_SECRET,
    authorization: { params: { scope: config.OIDC_SCOPES } },
    idToken: true,
    checks: ["pkce", "state", "nonce"],
    // next-auth needs an id; the full claims travel to the signIn/jwt callbacks through `profile`.
    profile: (profile) => ({
      id: profile.sub,
      name: typeof profile.name === "string" ? profile.name : profile.sub,
    }),
  };
}

function claimSettings() {
  const config = env();
  return {
    tenantClaim: config.OIDC_TENANT_CLAIM,
    rolesClaim: config.OIDC_ROLES_CLAIM,
    operatorTenant: config.RING0_OPERATOR_TENANT,
  };
}

declare module "next-auth" {
  interface Session {
    user: SessionUser;
  }
}

declare module "next-auth/jwt" {
  interface JWT {
    uid?: string;
    subject?: string;
    tenant?: string;
    role?: Ring0Role;
    /** Kept server-side (the cookie is encrypted) for RP-initiated logout at the IAM. */
    idToken?: string;
  }
}

/** next-auth options; built per call because the runtime resolves the IAM at start. */
export function authOptions(): AuthOptions {
  const config = env();
  return {
    secret: config.NEXTAUTH_SECRET,
    providers: [iamProvider()],
    session: { strategy: "jwt", maxAge: sessionMaxAgeSeconds },
    pages: { signIn: "/signin", error: "/signin" },
    logger: {
      error: (code, metadata) => logger.error(`next-auth: ${code}`, { metadata }),
      warn: (code) => logger.warn(`next-auth: ${code}`),
      debug: () => {},
    },
    callbacks: {
      async signIn({ profile }) {
        const result = identityFromClaims((profile ?? {}) as Record<string, unknown>, claimSettings());
        if (!result.ok) {
          logger.warn("sign-in refused", { reason: result.reason });
          await recordAudit({
            actorName: typeof profile?.sub === "string" ? profile.sub : "unknown",
            action: "auth.sign-in",
            result: "denied",
            detail: { reason: result.reason },
          });
          return "/signin?error=TenantClaim";
        }
        // The IAM vouches for the person, but Ring0 may have removed or disabled them in the tenant.
        const refusal = await createUserRepository(getDb()).signInRefusal(
          result.identity.subject,
          result.identity.tenant,
        );
        if (refusal) {
          logger.warn("sign-in refused", { subject: result.identity.subject, reason: refusal });
          await recordAudit({
            actorName: result.identity.name,
            actorTenant: result.identity.tenant,
            tenant: result.identity.tenant,
            action: "auth.sign-in",
            result: "denied",
            detail: { reason: refusal === "removed" ? "removed from the tenant" : "account disabled" },
          });
          return "/signin?error=AccessDenied";
        }
        return true;
      },
      async jwt({ token, account, profile }) {
        if (account && profile) {
          const result = identityFromClaims(profile as Record<string, unknown>, claimSettings());
          if (!result.ok) throw new Error(result.reason);
          const { identity } = result;
          const user = await createUserRepository(getDb()).recordSignIn(identity, new Date());
          token.uid = user.id;
          token.subject = identity.subject;
          token.tenant = identity.tenant;
          // The role the membership holds now: a Ring0-set role outlives the claim (roleSource ring0).
          token.role = user.role;
          token.name = identity.name;
          token.email = identity.email;
          token.idToken = account.id_token;
          await recordAudit({
            actorId: user.id,
            actorName: identity.name,
            actorTenant: identity.tenant,
            tenant: identity.tenant,
            action: "auth.sign-in",
            targetKind: "session",
            result: "success",
            detail: { role: user.role, roleSource: user.roleSource },
          });
        }
        return token;
      },
      async session({ session, token }) {
        const user = sessionUserFromToken(token);
        if (user) session.user = user;
        return session;
      },
    },
  };
}
