"use client";

import { useState } from "react";
import { toast } from "@/components/ui/toast";

/** Ends the Ring0 session, then the IAM's (the server answers where to go next). */
export function SignOutButton() {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="button"
      className="button"
      disabled={pending}
      onClick={async () => {
        setPending(true);
        try {
          const response = await fetch("/api/session/sign-out", { method: "POST" });
          const body = (await response.json()) as { redirect?: string; error?: string };
          if (!response.ok || !body.redirect)
            throw new Error(body.error ?? `Sign-out failed (HTTP ${response.status}).`);
          window.location.assign(body.redirect);
        } catch (error) {
          setPending(false);
          toast(error instanceof Error ? error.message : "Sign-out failed.", "error");
        }
      }}
    >
      {pending ? "Signing out…" : "Sign out"}
    </button>
  );
}
