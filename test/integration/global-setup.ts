/**
 * Integration test run setup: ONE embedded PostgreSQL per run, in a fresh temporary data dir on a free
 * port, with a template database migrated by applyMigrations. Tests reach it through
 * test/integration/database.ts. Teardown stops the server and removes the data dir.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { findFreePort, startEmbeddedPostgres } from "@/server/db/embedded-postgres";
import { applyMigrations } from "@/server/db/migrations";
import { createLogger } from "@/server/logger";

/** Migrated once; every worker database is a copy (test/integration/database.ts). */
const TEMPLATE_DATABASE = "ring0_template";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logger = createLogger({ service: "ring0-test" }, "warn");
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "ring0-test-pg-"));
  const removeTmp = () => fs.rm(tmp, { recursive: true, force: true });
  try {
    const server = await startOnFreePort(path.join(tmp, "data"), logger);
    try {
      await applyMigrations(server.url, logger);
    } catch (error) {
      await server.stop();
      throw error;
    }
    project.provide("ring0TemplateDatabaseUrl", server.url);
    return async () => {
      await server.stop();
      await removeTmp();
    };
  } catch (error) {
    await removeTmp();
    throw error;
  }
}

/** The free port can be taken between probing and binding: retry a few times. */
async function startOnFreePort(dataDir: string, logger: ReturnType<typeof createLogger>) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEmbeddedPostgres({
        dataDir,
        port: await findFreePort(),
        logger,
        database: TEMPLATE_DATABASE,
      });
    } catch (error) {
      if (attempt >= 3 || !/failed to start|already in use/.test(String(error))) throw error;
    }
  }
}
