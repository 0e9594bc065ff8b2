import { defineConfig, devices } from "@playwright/test";
import { e2eOrigin, e2ePort, e2eStateDir } from "./e2e/ports";
import { chromiumLaunchOptions, instanceEnvironment } from "./test/instance";

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
    launchOptions: chromiumLaunchOptions,
  },
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"] } }],
  webServer: {
    command: "npm run --silent start",
    url: `${baseURL}/api/health`,
    reuseExistingServer: !process.env.CI,
    timeout: 180_000,
    stdout: "ignore",
    stderr: "pipe",
    // Quota usage samples every 10 s (the minimum) so the quota spec sees its changes in the history chart.
    env: {
      ...instanceEnvironment({ port: e2ePort, stateDir: e2eStateDir }),
      RING0_QUOTA_SAMPLE_SECONDS: "10",
    },
  },
});
