"use client";

import { signIn } from "next-auth/react";
import { useState } from "react";

export function SignInButton({
  provider,
  label,
  callbackUrl,
}: {
  provider: string;
  label: string;
  callbackUrl: string;
}) {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="button"
      className="button button-primary"
      disabled={pending}
      onClick={() => {
        setPending(true);
        void signIn(provider, { callbackUrl });
      }}
    >
      {pending ? "Redirecting…" : `Sign in with ${label}`}
    </button>
  );
}
