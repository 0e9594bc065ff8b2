/**
 * The database a bench's Ring0 parts need: embedded PostgreSQL with migrations (API tokens, exec
 * session records, audit), and people signed in as the IAM would sign them in, each with an API
 * token of theirs.
 */
import path from "node:path";
import { createPrismaClient, disconnectDb, type PrismaClient, setDatabaseUrl } from "@/server/db/client";
import { findFreePort, startEmbeddedPostgres } from "@/server/db/embedded-postgres";
import { applyMigrations } from "@/server/db/migrations";
import { createTokenService } from "@/server/tokens/service";
import { createUserRepository, type SignedInIdentity } from "@/server/users/repository";
import { logger } from "./run";

export interface BenchDatabase {
  url: string;
  db: PrismaClient;
  stop(): Promise<void>;
}

/** Embedded PostgreSQL on a free port with its data under `dir`, migrated; the process-wide client too. */
export async function startDatabase(dir: string): Promise<BenchDatabase> {
  let server: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
  for (let attempt = 1; !server; attempt++) {
    try {
      server = await startEmbeddedPostgres({
        dataDir: path.join(dir, "data"),
        port: await findFreePort(),
        logger,
        database: "ring0",
      });
    } catch (error) {
      if (attempt >= 3 || !/failed to start|already in use/.test(String(error))) throw error;
    }
  }
  const started = server;
  try {
    await applyMigrations(started.url, logger);
  } catch (error) {
    await started.stop();
    throw error;
  }
  // recordAudit (the gateway's audit sink) uses the process-wide client.
  setDatabaseUrl(started.url);
  const db = createPrismaClient(started.url);
  return {
    url: started.url,
    db,
    async stop() {
      await db.$disconnect().catch(() => undefined);
      await disconnectDb().catch(() => undefined);
      await started.stop();
    },
  };
}

/** `identity` signed in, and a day's API token of theirs for their own tenant. */
async function signedInToken(db: PrismaClient, identity: SignedInIdentity): Promise<string> {
  const row = await createUserRepository(db).recordSignIn(identity, new Date());
  const issued = await createTokenService({ db }).issueToken({
    user: { ...identity, id: row.id },
    tenant: identity.tenant,
    name: "bench",
    expiresInDays: 1,
  });
  return issued.plaintext;
}

/** A tenant admin (or member) as the IAM would sign them in, and an API token of theirs for `tenant`. */
export function tenantAdminToken(
  db: PrismaClient,
  tenant: string,
  role: "tenant-admin" | "tenant-member" = "tenant-admin",
): Promise<string> {
  const who = role === "tenant-admin" ? "admin" : "member";
  return signedInToken(db, {
    subject: `${tenant}:${tenant}-${who}`,
    tenant,
    name: `${who === "admin" ? "Admin" : "Member"} of ${tenant}`,
    role,
    email: null,
  });
}

/** An operator signed in as the IAM would, and an operator-wide API token of theirs. */
export function operatorToken(db: PrismaClient, operatorTenant: string): Promise<string> {
  return signedInToken(db, {
    subject: `${operatorTenant}:bench-operator`,
    tenant: operatorTenant,
    name: "Bench operator",
    role: "operator",
    email: null,
  });
}
