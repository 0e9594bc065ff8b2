import { defineConfig, devices } from "@playwright/test";
import { e2eOrigin, e2ePort, e2eStateDir } from "./e2e/ports";

/**
 * End-to-end tests in Debian's Chromium (pinned Playwright 1.64 matches Chromium 156) against
 * the production build served by server.ts, with its own state dir, PostgreSQL and IAM ports so
 * a running development instance is never touched.
 */
const baseURL = e2eOrigin;

export default defineConfig({
  testDir: "e2e",
  globalTeardown: "./e2e/global-teardown.ts",
  outputDir: ".ring0/test-results/playwright",
  fullyParallel: false,
  workers: 1,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  reporter: [
    ["list"],
    [
      "json",
      { outputFile: process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ?? ".ring0/test-results/playwright.json" },
    ],
  ],
  use: {
    baseURL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
      ],
    },
  },
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"] } }],
  webServer: {
    command: "npm run --silent start",
    url: `${baseURL}/api/health`,
    reuseExistingServer: !process.env.CI,
    timeout: 180_000,
    stdout: "ignore",
    stderr: "pipe",
    env: {
      PORT: String(e2ePort),
      IAM_PORT: String(e2ePort + 1),
      EMBEDDED_POSTGRES_PORT: String(e2ePort + 10),
      RING0_STATE_DIR: e2eStateDir,
      NEXTAUTH_URL: baseURL,
      LOG_LEVEL: "warn",
    },
  },
});
