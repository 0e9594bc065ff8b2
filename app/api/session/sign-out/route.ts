import { cookies } from "next/headers";
import { originRefusal } from "@/server/auth/origin";
import { sessionCookieNames, signOut } from "@/server/auth/sign-out";
import { env } from "@/server/env";
import { endStreamsOf } from "@/server/streams/registry";

export const dynamic = "force-dynamic";

/** POST only, from an allowed Origin: a cross-site page cannot sign a user out. */
export async function POST(request: Request) {
  const source = {
    origin: request.headers.get("origin"),
    referer: request.headers.get("referer"),
    bearer: false,
  };
  if (originRefusal(source, env().allowedOrigins)) {
    return Response.json({ error: "Sign-out must come from Ring0's own pages." }, { status: 403 });
  }
  const { redirect, subject } = await signOut(request.headers.get("cookie"));
  // Open log and shell streams of this user end with the session, not at their next recheck.
  if (subject) endStreamsOf(subject);
  const jar = await cookies();
  for (const name of sessionCookieNames(jar.getAll().map((cookie) => cookie.name))) jar.delete(name);
  return Response.json({ redirect }, { headers: { "cache-control": "no-store" } });
}
