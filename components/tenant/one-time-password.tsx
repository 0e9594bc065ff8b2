"use client";

import { OneTimeSecret } from "@/components/ui/one-time-secret";

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
    <OneTimeSecret
      title="One-time password"
      label="Temporary password"
      secret={password}
      copiedMessage="Password copied."
      onDone={onDone}
    >
      Account "{username}" created. Give this temporary password to its owner now: Ring0 keeps only a hash and
      cannot show it again. They sign in with the username (or tenant:username).
    </OneTimeSecret>
  );
}
