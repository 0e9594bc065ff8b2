/** Ring0's IAM on its own (./serve.ts) refuses to serve demo passwords beyond loopback unless told to. */
import fs from "node:fs";

/** Whether an accounts file holds plain (demo) passwords rather than only password hashes. */
function hasDemoPasswords(file: string): boolean {
  const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as { accounts?: { password?: unknown }[] };
  return (parsed.accounts ?? []).some((account) => account.password !== undefined);
}

/**
 * Why these settings must not start (demo passwords anyone can read, served beyond loopback without
 * IAM_ALLOW_DEMO_ACCOUNTS=true), or undefined.
 */
export function demoAccountsRefusal(
  config: { IAM_LISTEN_ADDRESS: string; IAM_ALLOW_DEMO_ACCOUNTS: "true" | "false" },
  accountsFile: string,
): string | undefined {
  const loopback = config.IAM_LISTEN_ADDRESS === "::1" || config.IAM_LISTEN_ADDRESS.startsWith("127.");
  if (loopback || config.IAM_ALLOW_DEMO_ACCOUNTS === "true" || !hasDemoPasswords(accountsFile))
    return undefined;
  return `${accountsFile} has demo passwords anyone can read, and it would listen on ${config.IAM_LISTEN_ADDRESS}: give IAM_ACCOUNTS_FILE with passwordHash values, or set IAM_ALLOW_DEMO_ACCOUNTS=true for a trial`;
}
