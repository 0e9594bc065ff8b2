"use client";

import { toast } from "@/components/ui/toast";

/**
 * A new account's temporary password, shown exactly once: Ring0 keeps only its scrypt hash, so
 * closing this loses it (disable the account and create another if it is lost).
 */
export function OneTimePassword({
  username,
  password,
  onDone,
}: {
  username: string;
  password: string;
  onDone: () => void;
}) {
  return (
    <section className="card" aria-label="One-time password" style={{ marginBottom: "1rem" }}>
      <p className="alert alert-info" role="status">
        Account "{username}" created. Give this temporary password to its owner now: Ring0 keeps only a hash
        and cannot show it again. They sign in with the username (or tenant:username).
      </p>
      <label className="field">
        Temporary password
        <input readOnly value={password} onFocus={(event) => event.target.select()} />
      </label>
      <p>
        <button
          type="button"
          className="button"
          onClick={() => void navigator.clipboard?.writeText(password).then(() => toast("Password copied."))}
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
