"use client";

import type { ReactNode } from "react";
import { toast } from "@/components/ui/toast";

/**
 * A secret shown exactly once (a new token, a temporary password): Ring0 keeps only its hash, so
 * closing this loses it. `title` names the region, `label` the read-only field holding the secret.
 */
export function OneTimeSecret({
  title,
  label,
  secret,
  copiedMessage,
  onDone,
  children,
}: {
  title: string;
  label: string;
  secret: string;
  /** The toast after a copy, e.g. "Token copied." */
  copiedMessage: string;
  onDone: () => void;
  /** Whose secret this is and why it must be kept now. */
  children: ReactNode;
}) {
  return (
    <section className="card" aria-label={title} style={{ marginBottom: "1rem" }}>
      <p className="alert alert-info" role="status">
        {children}
      </p>
      <label className="field">
        {label}
        <input readOnly value={secret} onFocus={(event) => event.target.select()} />
      </label>
      <p>
        <button
          type="button"
          className="button"
          onClick={() => void navigator.clipboard?.writeText(secret).then(() => toast(copiedMessage))}
        >
          Copy
        </button>{" "}
        <button type="button" className="button" onClick={onDone}>
          Done
        </button>
      </p>
    </section>
  );
}
