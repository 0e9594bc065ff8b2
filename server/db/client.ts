/**
 * The Prisma client (generated into server/generated/prisma, `npm run db:generate`) over the
 * node-postgres driver adapter, and the process-wide instance.
 *
 * The instance lives on `globalThis`, not in this module: the custom server and the Next.js route
 * handlers are separate module graphs (and dev mode reloads modules), yet must share one client and
 * one connection pool.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import { processSlot } from "@/server/core/process-slots";
import { PrismaClient } from "@/server/generated/prisma/client";
import { logger } from "@/server/logger";

export type { AuditEvent, Membership, User } from "@/server/generated/prisma/client";
export { AuditResult, Prisma, PrismaClient, Role } from "@/server/generated/prisma/client";

const log = logger.child({ component: "db" });

/** A new client with its own connection pool. Prefer `getDb()` in application code. */
export function createPrismaClient(databaseUrl: string): PrismaClient {
  const adapter = new PrismaPg(
    { connectionString: databaseUrl },
    { onPoolError: (error) => log.warn("idle database connection failed", { error }) },
  );
  // Prisma's defaults (2 s to get a connection, 5 s per transaction) fail sign-ins on a busy
  // host; these transactions are short, so waiting longer only trades latency for an error.
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 10_000, timeout: 20_000 } });
}

interface DbState {
  url?: string;
  client?: PrismaClient;
}

const slot = processSlot<DbState>("db");

function state(): DbState {
  return slot.ensure(() => ({}));
}

/**
 * Set the database the process-wide client connects to (e.g. the embedded PostgreSQL's URL, known only
 * once it started). A client already open on another URL is disconnected.
 */
export function setDatabaseUrl(url: string): void {
  const current = state();
  if (current.url === url) return;
  const previous = current.client;
  current.url = url;
  current.client = undefined;
  if (previous) {
    previous.$disconnect().catch((error: unknown) => log.warn("disconnecting previous client", { error }));
  }
}

/** The configured database URL: `setDatabaseUrl`, else env DATABASE_URL, else undefined. */
export function getDatabaseUrl(): string | undefined {
  return state().url ?? process.env.DATABASE_URL;
}

/** The process-wide client, created on first use. */
export function getDb(): PrismaClient {
  const current = state();
  if (current.client) return current.client;
  const url = getDatabaseUrl();
  if (!url) throw new Error("No database configured: call setDatabaseUrl() or set DATABASE_URL");
  current.url = url;
  current.client = createPrismaClient(url);
  return current.client;
}

/** Close the process-wide client's connections (shutdown, tests). The next `getDb()` reconnects. */
export async function disconnectDb(): Promise<void> {
  const current = state();
  const client = current.client;
  current.client = undefined;
  await client?.$disconnect();
}

/** Resolves once the process-wide client's database answers a query (readiness). */
export async function pingDb(): Promise<void> {
  await getDb().$queryRaw`SELECT 1`;
}

const problem = processSlot<string | null>("db.problem");

/** Why the database is down while Ring0 knows it (its embedded PostgreSQL being restarted). */
export function databaseProblem(): string | null {
  return problem.get() ?? null;
}

export function setDatabaseProblem(value: string | null): void {
  problem.set(value);
}
