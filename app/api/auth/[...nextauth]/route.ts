import NextAuth from "next-auth";
import { authOptions } from "@/server/auth/options";

export const dynamic = "force-dynamic";

type RouteContext = { params: Promise<{ nextauth: string[] }> };

async function handler(req: Request, context: RouteContext) {
  return NextAuth(req as never, context as never, authOptions());
}

export { handler as GET, handler as POST };
