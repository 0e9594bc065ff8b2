import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { applyMigrations, createMigration } from "@/server/db/migrations";
import { createLogger } from "@/server/logger";
import { testServerUrl, withDatabase } from "@/test/integration/database";

const logger = createLogger({ service: "ring0-test" }, "error");
const migrationsDir = path.join(process.cwd(), "prisma", "migrations");
const created: string[] = [];

async function admin<T>(fn: (client: pg.Client) => Promise<T>, url = testServerUrl()): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A brand-new, empty database (not the migrated template). */
async function emptyDatabase(): Promise<string> {
  const name = `ring0_mig_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  created.push(name);
  return withDatabase(testServerUrl(), name);
}

async function migrationNames(): Promise<string[]> {
  const entries = await fs.readdir(migrationsDir, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

afterAll(async () => {
  await admin(async (c) => {
    for (const name of created) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
});

describe("applyMigrations", () => {
  it("applies every migration to an empty database, then nothing", async () => {
    const url = await emptyDatabase();
    const names = await migrationNames();
    expect(names.length).toBeGreaterThan(0);

    expect(await applyMigrations(url, logger)).toEqual({ applied: names });
    expect(await applyMigrations(url, logger)).toEqual({ applied: [] });

    const tables = await admin(
      (c) =>
        c.query<{ table_name: string }>(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
        ),
      url,
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual([
      "_prisma_migrations",
      "api_tokens",
      "audit_events",
      "exec_sessions",
      "iam_accounts",
      "memberships",
      "namespace_quota_defaults",
      "quota_refusals",
      "quota_samples",
      "quota_templates",
      "users",
    ]);
  });

  it("records migrations in _prisma_migrations like prisma migrate deploy", async () => {
    const url = await emptyDatabase();
    await applyMigrations(url, logger);

    const columns = await admin(
      (c) =>
        c.query<{ column_name: string; data_type: string; is_nullable: string }>(
          `SELECT column_name, data_type, is_nullable FROM information_schema.columns
           WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
        ),
      url,
    );
    expect(columns.rows).toEqual([
      { column_name: "id", data_type: "character varying", is_nullable: "NO" },
      { column_name: "checksum", data_type: "character varying", is_nullable: "NO" },
      { column_name: "finished_at", data_type: "timestamp with time zone", is_nullable: "YES" },
      { column_name: "migration_name", data_type: "character varying", is_nullable: "NO" },
      { column_name: "logs", data_type: "text", is_nullable: "YES" },
      { column_name: "rolled_back_at", data_type: "timestamp with time zone", is_nullable: "YES" },
      { column_name: "started_at", data_type: "timestamp with time zone", is_nullable: "NO" },
      { column_name: "applied_steps_count", data_type: "integer", is_nullable: "NO" },
    ]);

    const rows = await admin(
      (c) => c.query("SELECT * FROM _prisma_migrations ORDER BY started_at, migration_name"),
      url,
    );
    const names = await migrationNames();
    expect(rows.rows.map((r) => r.migration_name)).toEqual(names);
    for (const row of rows.rows) {
      const sql = await fs.readFile(path.join(migrationsDir, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(sql).digest("hex"));
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(row.logs).toBeNull();
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
    }
  });

  it("refuses when an applied migration's checksum differs from its file", async () => {
    const url = await emptyDatabase();
    await applyMigrations(url, logger);
    const [first] = await migrationNames();
    await admin(
      (c) =>
        c.query("UPDATE _prisma_migrations SET checksum = $1 WHERE migration_name = $2", [
          "0".repeat(64),
          first,
        ]),
      url,
    );
    await expect(applyMigrations(url, logger)).rejects.toThrow(
      new RegExp(`Refusing to migrate: migration\\(s\\) ${first} were modified after they were applied`),
    );
  });

  it("refuses when a migration previously failed", async () => {
    const url = await emptyDatabase();
    await applyMigrations(url, logger);
    const [first] = await migrationNames();
    await admin(
      (c) =>
        c.query(
          "UPDATE _prisma_migrations SET finished_at = NULL, logs = 'boom', applied_steps_count = 0 WHERE migration_name = $1",
          [first],
        ),
      url,
    );
    await expect(applyMigrations(url, logger)).rejects.toThrow(
      new RegExp(`Refusing to migrate: migration\\(s\\) ${first} previously failed`),
    );
  });

  it("does not double-apply when called concurrently", async () => {
    const url = await emptyDatabase();
    const names = await migrationNames();
    const results = await Promise.all([1, 2, 3].map(() => applyMigrations(url, logger)));
    expect(results.flatMap((r) => r.applied).sort()).toEqual(names);
    const count = await admin((c) => c.query("SELECT count(*)::int AS n FROM _prisma_migrations"), url);
    expect(count.rows[0].n).toBe(names.length);
  });
});

describe("createMigration", () => {
  it("writes a migration for schema changes, and nothing when in sync", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "ring0-migrations-"));
    try {
      const migrations = path.join(dir, "migrations");
      await fs.cp(migrationsDir, migrations, { recursive: true });
      const schemaPath = path.join(dir, "schema.prisma");
      const schema = await fs.readFile(path.join(process.cwd(), "prisma", "schema.prisma"), "utf8");
      await fs.writeFile(schemaPath, schema);
      const paths = { migrationsDir: migrations, schemaPath };

      expect(await createMigration("noop", testServerUrl(), logger, paths)).toEqual({
        migration: null,
        file: null,
      });

      await fs.writeFile(schemaPath, `${schema}\nmodel Widget {\n  id String @id\n  @@map("widgets")\n}\n`);
      const result = await createMigration("Add widgets!", testServerUrl(), logger, paths);
      expect(result.migration).toMatch(/^\d{14}_add_widgets$/);
      const sql = await fs.readFile(result.file ?? "", "utf8");
      expect(sql).toContain('CREATE TABLE "widgets"');
      expect(sql).not.toContain("CREATE SCHEMA");
      expect(path.dirname(result.file ?? "")).toBe(path.join(migrations, result.migration ?? ""));

      // The new migration applies on top of the others.
      const url = await emptyDatabase();
      const applied = await applyMigrations(url, logger, paths);
      expect(applied.applied.at(-1)).toBe(result.migration);

      expect(await createMigration("again", testServerUrl(), logger, paths)).toEqual({
        migration: null,
        file: null,
      });

      // No shadow databases are left behind.
      const shadows = await admin((c) =>
        c.query("SELECT datname FROM pg_database WHERE datname LIKE 'prisma_migrate_shadow_db_%'"),
      );
      expect(shadows.rows).toEqual([]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
