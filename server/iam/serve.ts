/**
 * Ring0's embedded IAM on its own, as an OpenID Connect provider for Ring0 running elsewhere (Ring0
 * in the local super cluster uses it as its "own IdP" from the same image:
 * `node --import tsx server/iam/serve.ts`). One replica: its keys and sessions are files in
 * IAM_STATE_DIR. Configured by the environment only:
 *   IAM_ISSUER              its issuer URL, as browsers and Ring0 both reach it (required)
 *   IAM_LISTEN_ADDRESS      the address it listens on (default 127.0.0.1; 0.0.0.0 in a pod)
 *   IAM_PORT                its port (default 3001)
 *   IAM_STATE_DIR           keys and sessions (default /var/lib/ring0-iam)
 *   IAM_ACCOUNTS_FILE       its accounts (default server/iam/seed-accounts.json: demo only)
 *   IAM_CLIENT_ID, IAM_CLIENT_SECRET
 *                           the one client (Ring0), its secret at least 32 characters (required)
 *   IAM_REDIRECT_URIS       the client's redirect URIs, comma-separated (required)
 *   IAM_POST_LOGOUT_REDIRECT_URIS  comma-separated (default: none)
 *   IAM_ALLOW_DEMO_ACCOUNTS true: serve an accounts file with plain demo passwords (the default
 *                           file's) beyond loopback; without it such a file is refused there
 * With DATABASE_URL, accounts created in Ring0 (that database's iam_accounts) sign in here too.
 */
import path from "node:path";
import { z } from "zod";
import { createLogger } from "@/server/logger";
import { demoAccountsRefusal } from "./demo-accounts";
import { startEmbeddedIam } from "./provider";

const httpUrl = z.url({ protocol: /^https?$/, error: "expected an http(s) URL" });
const urlList = z
  .string()
  .transform((text) =>
    text
      .split(",")
      .map((entry) => entry.trim())
      .filter(Boolean),
  )
  .pipe(z.array(httpUrl));

const settings = z.object({
  IAM_ISSUER: httpUrl,
  IAM_LISTEN_ADDRESS: z.union([z.ipv4(), z.ipv6()], { error: "expected an IP address" }).default("127.0.0.1"),
  IAM_PORT: z.coerce.number().int().min(1).max(65535).default(3001),
  IAM_STATE_DIR: z.string().min(1).default("/var/lib/ring0-iam"),
  IAM_ACCOUNTS_FILE: z.string().min(1).default("server/iam/seed-accounts.json"),
  IAM_CLIENT_ID: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "expected 1-64 of A-Z a-z 0-9 . _ -"),
  IAM_CLIENT_SECRET: z.string().min(32, "expected at least 32 characters of random secret"),
  IAM_REDIRECT_URIS: urlList.refine((list) => list.length > 0, "expected at least one redirect URI"),
  IAM_POST_LOGOUT_REDIRECT_URIS: urlList.default([]),
  IAM_ALLOW_DEMO_ACCOUNTS: z
    .enum(["true", "false"], { error: 'expected "true" or "false"' })
    .default("false"),
});

async function main(): Promise<void> {
  const logger = createLogger({ service: "ring0-iam" });
  const parsed = settings.safeParse(process.env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues)
      process.stderr.write(`ring0-iam: ${issue.path.join(".")}: ${issue.message}\n`);
    process.exit(2);
  }
  const config = parsed.data;
  const accountsFile = path.resolve(config.IAM_ACCOUNTS_FILE);
  const refusal = demoAccountsRefusal(config, accountsFile);
  if (refusal) {
    process.stderr.write(`ring0-iam: ${refusal}\n`);
    process.exit(2);
  }
  const iam = await startEmbeddedIam({
    port: config.IAM_PORT,
    listenAddress: config.IAM_LISTEN_ADDRESS,
    issuer: config.IAM_ISSUER,
    stateDir: config.IAM_STATE_DIR,
    accountsFile,
    clients: [
      {
        clientId: config.IAM_CLIENT_ID,
        clientSecret: config.IAM_CLIENT_SECRET,
        redirectUris: config.IAM_REDIRECT_URIS,
        postLogoutRedirectUris: config.IAM_POST_LOGOUT_REDIRECT_URIS,
      },
    ],
    logger,
  });
  const stop = () => {
    void iam.close().finally(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`ring0-iam: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
