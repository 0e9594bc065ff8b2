import path from "node:path";
import { defineConfig } from "prisma/config";

/**
 * Prisma 7 configuration. The URL is only needed by commands that talk to a database; `prisma generate`
 * works without one, so fall back to a harmless local URL rather than failing when DATABASE_URL is unset.
 * Migrations are applied by server/db/migrations.ts (WASM schema engine), not by `prisma migrate`.
 */
export default defineConfig({
  schema: path.join("prisma", "schema.prisma"),
  migrations: { path: path.join("prisma", "migrations") },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://ring0@127.0.0.1:54329/ring0" },
});
