import { getToken, type JWT } from "next-auth/jwt";
import type { Ring0Role, SessionUser } from "@/server/core/roles";
import { env } from "@/server/env";

/** Parses a Cookie header into name → value (first occurrence wins, as browsers send it). */
export function parseCookieHeader(header: string | null | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  if (!header) return cookies;
  for (const part of header.split(";")) {
    const index = part.indexOf("=");
    if (index < 0) continue;
    const name = part.slice(0, index).trim();
    if (!name || name in cookies) continue;
    const raw = part.slice(index + 1).trim();
    try {
      cookies[name] = decodeURIComponent(raw);
    } catch {
      cookies[name] = raw;
    }
  }
  return cookies;
}

export function sessionUserFromToken(token: JWT | null): SessionUser | null {
  if (!token?.uid || !token.tenant || !token.role || !token.subject) return null;
  return {
    id: token.uid,
    subject: token.subject,
    name: token.name ?? token.subject,
    email: token.email ?? null,
    tenant: token.tenant,
    role: token.role,
  };
}

/** The next-auth session cookie's (encrypted) JWT, or null when absent, expired or forged. */
export async function tokenFromCookieHeader(cookieHeader: string | null | undefined): Promise<JWT | null> {
  const config = env();
  const cookies = parseCookieHeader(cookieHeader);
  try {
    return await getToken({
      req: { headers: { cookie: cookieHeader ?? "" }, cookies } as never,
      secret: config.NEXTAUTH_SECRET,
      secureCookie: config.publicUrl.startsWith("https://"),
      logger: { error: () => {}, warn: () => {}, debug: () => {} } as never,
    });
  } catch {
    return null;
  }
}

/** The role a user's membership in their tenant grants now, or null when it grants nothing. */
export type CurrentRoleLookup = (user: SessionUser) => Promise<Ring0Role | null>;

/** Reads the membership from the database (lazily imported: the cookie decoding stays pure). */
export const currentRoleFromDatabase: CurrentRoleLookup = async (user) => {
  const [{ getDb }, { createUserRepository }] = await Promise.all([
    import("@/server/db/client"),
    import("@/server/users/repository"),
  ]);
  return createUserRepository(getDb()).membershipRole(user.id, user.tenant);
};

/**
 * The signed-in user for a request: the session cookie says who, the database says which role
 * they hold now. The role in the cookie is only the one of their sign-in, so a role a tenant admin
 * changed applies on the very next request, and a removed member or a disabled account has no
 * session at all (every layer then treats the request as signed out). tRPC, route handlers,
 * server components, the proxy and WebSocket upgrades all decide through this one function.
 */
export async function sessionUserFromCookieHeader(
  cookieHeader: string | null | undefined,
  currentRole: CurrentRoleLookup = currentRoleFromDatabase,
): Promise<SessionUser | null> {
  const user = sessionUserFromToken(await tokenFromCookieHeader(cookieHeader));
  if (!user) return null;
  const role = await currentRole(user);
  return role ? { ...user, role } : null;
}
