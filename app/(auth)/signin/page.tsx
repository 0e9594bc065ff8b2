import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { providerId } from "@/server/auth/options";
import { currentUser } from "@/server/auth/server-session";
import { homePath } from "@/server/core/roles";
import { env } from "@/server/env";
import { SignInButton } from "./sign-in-button";

export const metadata: Metadata = { title: "Sign in" };
export const dynamic = "force-dynamic";

const errorMessages: Record<string, string> = {
  TenantClaim: "Your account has no tenant in the identity provider. Ask your administrator to assign one.",
  AccessDenied: "Access was denied by the identity provider.",
  OAuthCallback: "The identity provider's answer could not be verified. Please sign in again.",
  OAuthSignin: "Could not reach the identity provider. Try again in a moment.",
  SessionRequired: "Please sign in to continue.",
};

/** Only same-origin paths may be a post-sign-in destination (no open redirects). */
function safeCallback(value: string | undefined): string | null {
  return value?.startsWith("/") && !value.startsWith("//") && !value.startsWith("/\\") ? value : null;
}

export default async function SignInPage(props: {
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const params = await props.searchParams;
  const user = await currentUser();
  const callback = safeCallback(params.callbackUrl);
  if (user) redirect(callback ?? homePath(user));
  const error = params.error ? (errorMessages[params.error] ?? "Sign-in failed. Please try again.") : null;
  return (
    <main className="center-page">
      <section className="card auth-card" aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to Ring0</h1>
        <p>
          Ring0 uses your organisation&apos;s identity provider. You will come back here after signing in.
        </p>
        {error ? (
          <p className="alert alert-error" role="alert">
            {error}
          </p>
        ) : null}
        <SignInButton provider={providerId} label={env().OIDC_DISPLAY_NAME} callbackUrl={callback ?? "/"} />
      </section>
    </main>
  );
}
