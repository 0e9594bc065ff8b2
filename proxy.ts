import { type NextRequest, NextResponse } from "next/server";
import { sessionUserFromCookieHeader } from "@/server/auth/session";

/**
 * Sends signed-out visitors of the console and portals to the sign-in page, keeping where they
 * were going. Pages and procedures still check access themselves; this only routes people.
 */
export async function proxy(request: NextRequest) {
  const user = await sessionUserFromCookieHeader(request.headers.get("cookie"));
  if (user) return NextResponse.next();
  const signIn = new URL("/signin", request.nextUrl);
  signIn.searchParams.set("callbackUrl", `${request.nextUrl.pathname}${request.nextUrl.search}`);
  return NextResponse.redirect(signIn);
}

export const config = { matcher: ["/operator/:path*", "/t/:path*"] };
