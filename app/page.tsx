import { redirect } from "next/navigation";
import { currentUser } from "@/server/auth/server-session";
import { homePath } from "@/server/core/roles";

export const dynamic = "force-dynamic";

/** Operators land in the console, tenant users in their portal, everyone else at sign-in. */
export default async function Home() {
  const user = await currentUser();
  redirect(user ? homePath(user) : "/signin");
}
