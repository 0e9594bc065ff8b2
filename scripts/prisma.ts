/**
 * Database tooling without Prisma's native engines (which cannot be downloaded here):
 *
 *   tsx scripts/prisma.ts generate [prisma generate args…]   generate the client (server/generated/prisma)
 *   tsx scripts/prisma.ts migrate                            apply pending migrations
 *   tsx scripts/prisma.ts create <name>                      create a migration from schema changes
 *
 * `migrate` targets DATABASE_URL, or, when it is unset, the app's embedded PostgreSQL
 * (`<RING0_STATE_DIR or .ring0>/postgres`, port 54329, database `ring0`).
 * `create` needs a server for a throwaway shadow database: SHADOW_DATABASE_URL if set, otherwise a
 * temporary embedded PostgreSQL.
 */
import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { findFreePort, startEmbeddedPostgres } from "@/server/db/embedded-postgres";
import { applyMigrations, createMigration } from "@/server/db/migrations";
import { createLogger } from "@/server/logger";

const DEFAULT_PORT = 54329;
const DEFAULT_DATABASE = "ring0";

const logger = createLogger({ service: "ring0", component: "db-cli" });

function usage(): never {
  process.stderr.write(
    "usage: tsx scripts/prisma.ts generate [args…] | migrate | create <name>\n" +
      "  generate   prisma generate (no engine download)\n" +
      "  migrate    apply migrations to DATABASE_URL or the embedded PostgreSQL\n" +
      "  create     create prisma/migrations/<timestamp>_<name> from schema changes\n",
  );
  process.exit(2);
}

/** `prisma generate` with the schema engine pointed at an existing file so the CLI never downloads it. */
async function generate(args: string[]): Promise<number> {
  const require = createRequire(path.join(process.cwd(), "package.json"));
  const cli = require.resolve("prisma/build/index.js");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // generate does not run the schema engine; it only checks that the binary exists.
    PRISMA_SCHEMA_ENGINE_BINARY:
      process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? path.join(process.cwd(), "package.json"),
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
    CHECKPOINT_DISABLE: "1",
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, "generate", ...args], { env, stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function migrate(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (url) {
    await applyMigrations(url, logger);
    return;
  }
  const stateDir = path.resolve(process.env.RING0_STATE_DIR ?? ".ring0");
  const server = await startEmbeddedPostgres({
    dataDir: path.join(stateDir, "postgres"),
    port: DEFAULT_PORT,
    database: DEFAULT_DATABASE,
    logger,
  });
  try {
    await applyMigrations(server.url, logger);
  } finally {
    await server.stop();
  }
}

async function create(name: string | undefined): Promise<void> {
  if (!name) usage();
  const shadowUrl = process.env.SHADOW_DATABASE_URL;
  if (shadowUrl) {
    await createMigration(name, shadowUrl, logger);
    return;
  }
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "ring0-shadow-"));
  try {
    const server = await startEmbeddedPostgres({
      dataDir: path.join(tmp, "data"),
      port: await findFreePort(),
      logger,
    });
    try {
      await createMigration(name, server.url, logger);
    } finally {
      await server.stop();
    }
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [command, ...args] = process.argv.slice(2);
  switch (command) {
    case "generate":
      process.exitCode = await generate(args);
      return;
    case "migrate":
      await migrate();
      return;
    case "create":
      await create(args[0]);
      return;
    default:
      usage();
  }
}

main()
  .catch((error: unknown) => {
    logger.error(error instanceof Error ? error.message : String(error), { error });
    process.exitCode = 1;
  })
  // Exit explicitly rather than wait for stray handles (pools, timers) of the libraries involved.
  .finally(() => process.exit());
