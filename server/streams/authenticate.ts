/**
 * Who opens a browser stream: the session cookie (the browser) or a Ring0 API token in
 * `Authorization: Bearer` (a program such as a benchmark or the CLI). Each answer carries the
 * credential to ask again (server/auth/rechecks.ts), so an open stream ends when the session ends,
 * the member is removed or their role changes, or the token is revoked or expires.
 */
import type { IncomingHttpHeaders } from "node:http";
import { bearerCredential } from "@/server/auth/credentials";
import { sessionUserFromCookieHeader } from "@/server/auth/session";
import { isOperator } from "@/server/core/roles";
import { getDb } from "@/server/db/client";
import { env } from "@/server/env";
import { hashToken } from "@/server/tokens/format";
import { createTokenService } from "@/server/tokens/service";
import type { StreamAuthentication } from "./upgrade";

export async function authenticateStream(headers: IncomingHttpHeaders): Promise<StreamAuthentication | null> {
  const bearer = bearerCredential(headers.authorization ?? null);
  if (bearer) {
    if ("malformed" in bearer) return null;
    const tokens = createTokenService({ db: getDb() });
    const verified = await tokens.verifyToken(bearer.token);
    if (!verified) return null;
    const { user, token } = verified;
    const operatorWide = isOperator(user) && token.tenant === env().RING0_OPERATOR_TENANT;
    return {
      user,
      method: "token",
      confinedTo: operatorWide ? null : token.tenant,
      credential: {
        key: `token:${token.id}`,
        current: async () => (await tokens.verifyToken(bearer.token))?.user ?? null,
      },
    };
  }
  const cookie = headers.cookie;
  const user = await sessionUserFromCookieHeader(cookie);
  if (!user) return null;
  return {
    user,
    method: "session",
    confinedTo: null,
    // The same Cookie header is the same session; its hash keeps the secret out of the key.
    credential: {
      key: `session:${hashToken(cookie ?? "")}`,
      current: () => sessionUserFromCookieHeader(cookie),
    },
  };
}
