import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));

/** Never collect tests from these (Playwright specs live in e2e/). */
const exclude = ["**/node_modules/**", "**/.next/**", "e2e/**", "**/.ring0/**", "server/generated/**"];

export default defineConfig({
  resolve: {
    // tsconfig "paths": { "@/*": ["./*"] }
    alias: [{ find: /^@\//, replacement: root }],
  },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          environment: "node",
          include: ["**/*.test.ts", "**/*.test.tsx"],
          exclude: [...exclude, "**/*.int.test.ts", "test/in-cluster/**"],
          setupFiles: ["test/setup/fail-on-console-error.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          environment: "node",
          include: ["**/*.int.test.ts"],
          exclude,
          // One PostgreSQL per run, a migrated template database, one database per worker; one local super cluster.
          globalSetup: ["test/integration/global-setup.ts", "test/integration/super-cluster.ts"],
          setupFiles: ["test/setup/fail-on-console-error.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          // Ring0 itself in the local super cluster: its images (from the production build, so this
          // project runs after `npm run build`: `vitest run --project in-cluster`, a CI stage of its own).
          name: "in-cluster",
          environment: "node",
          include: ["test/in-cluster/**/*.test.ts"],
          exclude,
          setupFiles: ["test/setup/fail-on-console-error.ts"],
          testTimeout: 300_000,
          hookTimeout: 900_000,
        },
      },
    ],
  },
});
