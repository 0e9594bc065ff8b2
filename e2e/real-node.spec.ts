/**
 * Issue 16's "done when" in the browser, on a Ring0 instance of its own whose local super cluster
 * has a real node (the e2e instance runs simulated nodes only, and one host runs one world with real
 * nodes): a tenant admin's pod runs in a real container, whose logs and shell the portal shows (its
 * own hostname and PID 1), with its CPU and memory; the operator's node page shows the real node's
 * usage and its kubelet's log.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { realNodePrerequisites } from "@/server/cluster/real-node/host";
import { TOOLBOX_IMAGE } from "@/server/cluster/real-node/plan";
import { createLogger } from "@/server/logger";
import { removeLocalWorld } from "@/server/runtime/local-world";
import { chromiumLaunchOptions, instanceEnvironment } from "@/test/instance";
import { expect, signInThroughIam, test } from "./fixtures";
import { kubectlThroughPortal } from "./kubectl";
import { AppShell } from "./pages/app-shell";
import { terminalText, typeLine } from "./terminal";

const port = Number(process.env.E2E_REAL_NODE_PORT ?? 3300);
const origin = `http://localhost:${port}`;
const stateDir = path.resolve(".ring0/e2e-real-node");
const problems = realNodePrerequisites();
/** Ring0 starting: embedded PostgreSQL and IAM, the super cluster with its real node, seed tenants. */
const starting = { timeout: 300_000 };
const streaming = { timeout: 60_000 };

test.describe("a real node in the browser (issue 16)", () => {
  test.setTimeout(600_000);
  let server: ChildProcess | undefined;
  let log = "";

  test.beforeAll(async () => {
    test.setTimeout(360_000);
    // Never skipped: a host that cannot run a real node fails here and says why.
    expect(problems, "this host cannot run a real node (./ring0 installs what it needs as root)").toEqual([]);
    fs.rmSync(stateDir, { recursive: true, force: true });
    server = spawn(path.resolve("node_modules/.bin/tsx"), ["server.ts"], {
      stdio: ["ignore", "ignore", "pipe"],
      env: {
        ...process.env,
        NODE_ENV: "production",
        NEXT_TELEMETRY_DISABLED: "1",
        ...instanceEnvironment({ port, stateDir }),
        RING0_REAL_NODES: "1",
      },
    });
    server.stderr?.on("data", (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-4000);
    });
    await expect
      .poll(
        async () => {
          if (server?.exitCode !== null) throw new Error(`Ring0 exited (${server?.exitCode}): ${log}`);
          return (await fetch(`${origin}/api/health`).catch(() => null))?.ok === true;
        },
        { ...starting, intervals: [1_000] },
      )
      .toBe(true);
  });

  // A failure here says what Ring0 logged last (the instance's own log is not the suite's).
  // biome-ignore lint/correctness/noEmptyPattern: Playwright wants a fixtures pattern first
  test.afterEach(async ({}, testInfo) => {
    if (testInfo.status !== testInfo.expectedStatus) {
      await testInfo.attach("ring0.log", { body: log });
      process.stdout.write(`Ring0's log (real-node instance), last lines:\n${log}\n`);
    }
  });

  test.afterAll(async () => {
    test.setTimeout(300_000);
    if (server && server.exitCode === null) {
      server.kill("SIGTERM");
      await new Promise((resolve) => server?.once("exit", resolve));
    }
    // The instance's super cluster (with its real node and registry) and tenant control planes.
    await removeLocalWorld(stateDir, createLogger({}, "warn"));
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  test("a tenant's pod runs in a real container: portal logs, shell and usage; the node page for operators", async ({
    playwright,
    consoleErrors,
  }) => {
    const browser = await playwright.chromium.launch(chromiumLaunchOptions);
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-real-node-e2e-"));
    try {
      const admin = await (await browser.newContext({ baseURL: origin })).newPage();
      admin.on("pageerror", (error) => consoleErrors.push(`${admin.url()}: ${error.message}`));
      await signInThroughIam(admin, "acme-admin");
      await expect(admin).toHaveURL(/\/t\/acme$/);
      const kubectl = await kubectlThroughPortal(admin, work);
      kubectl([
        "run",
        "t",
        `--image=${TOOLBOX_IMAGE}`,
        "--restart=Never",
        "--command",
        "--",
        "sh",
        "-c",
        "echo hello from $(hostname); exec sleep 3600",
      ]);

      await test.step("the pod runs on the real node, with its memory in use", async () => {
        await new AppShell(admin).open("Workloads");
        const pods = admin.getByRole("table", { name: "Pods" });
        const row = pods.getByRole("row", { name: /\bt\b/ });
        await expect(row).toContainText("Running", starting);
        await expect(row).toContainText("ring0-real-0");
        const headers = await pods.getByRole("columnheader").allTextContents();
        const memory = row.getByRole("cell").nth(headers.indexOf("Memory"));
        await expect(async () => {
          await admin.reload();
          await expect(memory).toHaveText(/^\d+(\.\d)? (MiB|GiB)$/, { timeout: 5_000 });
        }).toPass(streaming);
        await row.getByRole("link", { name: "t", exact: true }).click();
        await expect(admin.getByRole("heading", { level: 1, name: "Pod t" })).toBeVisible();
      });

      await test.step("Logs: what the container printed", async () => {
        await admin.getByRole("tab", { name: "Logs" }).click();
        const lines = admin
          .getByRole("tabpanel", { name: "Logs" })
          .getByRole("log", { name: "Logs of pod t" });
        await expect(lines).toContainText("hello from t", streaming);
      });

      await test.step("Shell: the container's own hostname and PID 1", async () => {
        await admin.getByRole("tab", { name: "Shell" }).click();
        const shell = admin.getByRole("tabpanel", { name: "Shell" });
        await shell.getByRole("combobox", { name: "Shell" }).selectOption("sh");
        await shell.getByRole("button", { name: "Connect" }).click();
        await expect(shell.getByTestId("exec-started")).toContainText(
          "Connected: sh in container",
          streaming,
        );
        const terminal = shell.getByTestId("exec-terminal");
        await terminal.click();
        await typeLine(admin, "echo host-$(hostname)");
        await expect.poll(() => terminalText(terminal), streaming).toMatch(/^host-t\s*$/m);
        await typeLine(admin, "echo pid1-$(tr '\\0' '-' </proc/1/cmdline)");
        await expect.poll(() => terminalText(terminal), streaming).toMatch(/^pid1-sleep-3600-\s*$/m);
        await typeLine(admin, "exit 0");
        await expect(shell.getByTestId("exec-exit")).toContainText("Shell exited with code 0", streaming);
      });

      await test.step("operator: the real node's usage and its kubelet's log", async () => {
        const operator = await (await browser.newContext({ baseURL: origin })).newPage();
        operator.on("pageerror", (error) => consoleErrors.push(`${operator.url()}: ${error.message}`));
        await signInThroughIam(operator, "operator");
        await expect(operator).toHaveURL(/\/operator$/);
        await operator.goto("/operator/nodes/ring0-real-0");
        await expect(operator.getByRole("region", { name: "CPU in use" })).toContainText(
          /\d+(m|\.\d+)? cores/,
          streaming,
        );
        await expect(operator.getByRole("region", { name: "Memory in use" })).toContainText(
          /\d+(\.\d)? (MiB|GiB)/,
        );
        await expect(operator.getByTestId("node-usage-source")).toContainText("kubelet's resource metrics");
        await operator.getByRole("tab", { name: "kubelet log" }).click();
        const kubelet = operator
          .getByRole("tabpanel", { name: "kubelet log" })
          .getByRole("log", { name: "kubelet log of node ring0-real-0" });
        await expect(kubelet).toContainText(/kubelet|Kubelet/, streaming);
      });
    } finally {
      await browser.close();
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
