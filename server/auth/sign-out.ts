import { recordAudit } from "@/server/audit/service";
import { sessionUserFromToken, tokenFromCookieHeader } from "@/server/auth/session";
import { env } from "@/server/env";
import { logger } from "@/server/logger";

export const signedOutPath = "/signed-out";

/** Cookies next-auth may have set for a session (chunked tokens included). */
export function sessionCookieNames(cookieNames: string[]): string[] {
  return cookieNames.filter((name) =>
    /^(__Secure-|__Host-)?next-auth\.(session-token|csrf-token|callback-url)/.test(name),
  );
}

async function endSessionEndpoint(issuer: string): Promise<string | null> {
  try {
    const response = await fetch(`${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`, {
      signal: AbortSignal.timeout(2_000),
    });
    if (!response.ok) return null;
    const discovery = (await response.json()) as { end_session_endpoint?: unknown };
    return typeof discovery.end_session_endpoint === "string" ? discovery.end_session_endpoint : null;
  } catch (error) {
    logger.warn("IAM discovery failed during sign-out; signing out of Ring0 only", { error });
    return null;
  }
}

/**
 * Ends the Ring0 session and returns where the browser goes next: the IAM's end-session
 * endpoint (RP-initiated logout, so the IAM session ends too) or Ring0's signed-out page, and whose
 * session it was (the caller ends that user's open streams with it).
 */
export async function signOut(cookieHeader: string | null): Promise<{ redirect: string; subject?: string }> {
  const config = env();
  const token = await tokenFromCookieHeader(cookieHeader);
  const user = sessionUserFromToken(token);
  const signedOut = `${config.publicUrl}${signedOutPath}`;
  if (user) {
    await recordAudit({
      actorId: user.id,
      actorName: user.name,
      actorTenant: user.tenant,
      tenant: user.tenant,
      action: "auth.sign-out",
      targetKind: "session",
      result: "success",
    });
  }
  const subject = user?.subject;
  if (!token?.idToken || !config.OIDC_ISSUER) return { redirect: signedOut, subject };
  const endpoint = await endSessionEndpoint(config.OIDC_ISSUER);
  if (!endpoint) return { redirect: signedOut, subject };
  const url = new URL(endpoint);
  url.searchParams.set("id_token_hint", token.idToken);
  url.searchParams.set("post_logout_redirect_uri", signedOut);
  if (config.OIDC_CLIENT_ID) url.searchParams.set("client_id", config.OIDC_CLIENT_ID);
  return { redirect: url.toString(), subject };
}
