/**
 * Databases for integration tests. test/integration/global-setup.ts starts one PostgreSQL per run and
 * migrates a template database; each worker gets its own copy of it, created once per worker.
 */
import pg from "pg";
import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of the migrated template database on the run's PostgreSQL server. */
    ring0TemplateDatabaseUrl: string;
  }
}

/** `url` with its database name replaced. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/** URL of the run's PostgreSQL server, on its `postgres` maintenance database. */
export function testServerUrl(): string {
  return withDatabase(inject("ring0TemplateDatabaseUrl"), "postgres");
}

let workerDatabase: Promise<string> | undefined;

/**
 * URL of this worker's database (`ring0_w<poolId>`), a copy of the migrated template. Created on first
 * use in the worker and reused by its later test files, so tests must not assume an empty database.
 */
export function testDatabaseUrl(): Promise<string> {
  workerDatabase ??= createWorkerDatabase().catch((error: unknown) => {
    workerDatabase = undefined;
    throw error;
  });
  return workerDatabase;
}

async function createWorkerDatabase(): Promise<string> {
  const name = `ring0_w${process.env.VITEST_POOL_ID ?? "0"}`;
  const admin = new pg.Client({ connectionString: testServerUrl() });
  await admin.connect();
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (exists.rowCount === 0) await createFromTemplate(admin, name);
  } finally {
    await admin.end();
  }
  return withDatabase(testServerUrl(), name);
}

async function createFromTemplate(admin: pg.Client, name: string): Promise<void> {
  const template = decodeURIComponent(new URL(inject("ring0TemplateDatabaseUrl")).pathname.slice(1));
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.query(
        `CREATE DATABASE ${admin.escapeIdentifier(name)} TEMPLATE ${admin.escapeIdentifier(template)}`,
      );
      return;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "42P04") return; // duplicate_database: created meanwhile
      // object_in_use: another worker is copying the template right now.
      if (code !== "55006" || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}
