import "server-only";
import { cookies } from "next/headers";
import { sessionUserFromCookieHeader } from "@/server/auth/session";
import type { SessionUser } from "@/server/core/roles";

/** The signed-in user in a server component or route handler. */
export async function currentUser(): Promise<SessionUser | null> {
  const jar = await cookies();
  const header = jar
    .getAll()
    .map((cookie) => `${cookie.name}=${encodeURIComponent(cookie.value)}`)
    .join("; ");
  return sessionUserFromCookieHeader(header);
}
