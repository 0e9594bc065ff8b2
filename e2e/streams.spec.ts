/**
 * Issue 6 in the browser: a pod's logs (live lines, search, filter, download, pause / follow), its
 * shell (output, resize, exit code, audited), a node's vn-agent log for the operator, the refusals
 * a page can provoke, and the two lists that open logs: a workload's pods by owner (tenant) and the
 * super cluster's pods (operator). In the local world a pod's container output is the file kwok
 * serves, so appending to it is the container writing a line.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import NodeWebSocket from "ws";
import { simulatedPodLogFile } from "@/server/cluster/simulated-pods";
import { superNamespace } from "@/server/syncer/naming";
import { expect, test } from "./fixtures";
import { kubectlThroughPortal } from "./kubectl";
import { AppShell } from "./pages/app-shell";
import { e2eOrigin, e2eStateDir } from "./ports";
import { terminalText, typeLine } from "./terminal";

/** Synced down, scheduled on a kwok node, status synced back up. */
const syncing = { timeout: 90_000 };
/** A stream connects through the gateway and the tenant's control plane. */
const streaming = { timeout: 30_000 };

/** A container's log line as kwok serves it (CRI format). */
const criLine = (text: string) => `${new Date().toISOString()} stdout F ${text}\n`;

/** Opens a WebSocket from the page's own origin and reports its frames and close code. */
function socketFromPage(page: Page, streamPath: string) {
  return page.evaluate(
    (target) =>
      new Promise<{ frames: string[]; code: number }>((resolve) => {
        const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${target}`;
        const socket = new WebSocket(url);
        const frames: string[] = [];
        socket.onmessage = (event) => frames.push(String(event.data));
        socket.onclose = (event) => resolve({ frames, code: event.code });
      }),
    streamPath,
  );
}

test.describe("browser streams (issue 6)", () => {
  test.setTimeout(420_000);

  test("a tenant admin reads a pod's logs and runs its shell; an operator reads the node's vn-agent log; other callers are refused", async ({
    loginAs,
    page: anonymous,
  }) => {
    const name = `streams-${Math.random().toString(36).slice(2, 8)}`;
    const marker = `ring0-e2e-${name}`;
    const admin = await loginAs("tenant-admin", "acme");
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-streams-"));
    let kubectl: ((args: string[]) => string) | null = null;
    try {
      kubectl = await kubectlThroughPortal(admin, work);
      kubectl(["run", name, "--image=nginx", "-n", "default"]);

      let node = "";
      await test.step("the pod runs and its page opens", async () => {
        await new AppShell(admin).open("Workloads");
        const pods = admin.getByRole("table", { name: "Pods" });
        const row = pods.getByRole("row", { name: new RegExp(name) });
        await expect(row).toContainText("Running", syncing);
        const nodeColumn = (await pods.getByRole("columnheader").allTextContents()).indexOf("Node");
        node = (await row.getByRole("cell").nth(nodeColumn).textContent())?.trim() ?? "";
        expect(node).toMatch(/^[a-z0-9][-a-z0-9.]*$/);
        await row.getByRole("link", { name }).click();
        await expect(admin.getByRole("heading", { level: 1, name: `Pod ${name}` })).toBeVisible();
      });

      const logsFile = simulatedPodLogFile(e2eStateDir, superNamespace("acme", "default"), name);
      const logs = admin.getByRole("tabpanel", { name: "Logs" });
      const lines = logs.getByRole("log", { name: `Logs of pod ${name}` });

      await test.step("logs: existing lines, then new ones as the container writes them", async () => {
        await expect.poll(() => fs.existsSync(logsFile), syncing).toBe(true);
        await admin.getByRole("tab", { name: "Logs" }).click();
        await expect(lines).toContainText("simulated pod", streaming);
        await expect(logs.getByTestId("stream-status")).toHaveText(/Following/);
        fs.appendFileSync(logsFile, criLine(`${marker} apple`) + criLine(`${marker} banana`));
        await expect(lines).toContainText(`${marker} apple`, streaming);
        await expect(lines).toContainText(`${marker} banana`);
      });

      await test.step("logs: search highlights matches, the filter keeps only them", async () => {
        await logs.getByRole("searchbox", { name: "Search logs" }).fill("banana");
        await expect(lines.locator("mark")).toHaveText(["banana"]);
        await expect(logs.getByTestId("log-line-count")).toContainText("1 matching");
        const only = logs.getByRole("checkbox", { name: "Only matching lines" });
        await only.check();
        await expect(lines).toHaveAttribute("data-count", "1");
        await expect(lines).toContainText(`${marker} banana`);
        await expect(lines).not.toContainText("apple");
        await expect(lines).not.toContainText("simulated pod");
        await only.uncheck();
        await logs.getByRole("searchbox", { name: "Search logs" }).fill("");
        await expect(lines).toContainText(`${marker} apple`);
      });

      await test.step("logs: Pause holds new lines back, Download saves what is shown, Follow catches up", async () => {
        await logs.getByRole("button", { name: "Pause" }).click();
        // The server acknowledges the pause before it stops reading the container's log.
        await expect(logs.getByTestId("stream-status")).toHaveText(/Paused/);
        fs.appendFileSync(logsFile, criLine(`${marker} cherry`));

        const [download] = await Promise.all([
          admin.waitForEvent("download"),
          logs.getByRole("button", { name: "Download" }).click(),
        ]);
        const saved = path.join(work, download.suggestedFilename());
        await download.saveAs(saved);
        const text = fs.readFileSync(saved, "utf8");
        expect(text).toContain(`${marker} apple\n`);
        expect(text).toContain(`${marker} banana\n`);
        expect(text).toContain("simulated pod");
        // Written while paused: neither saved nor shown until the viewer follows again.
        expect(text).not.toContain("cherry");
        await expect(lines).not.toContainText("cherry");

        await logs.getByRole("button", { name: "Follow" }).click();
        await expect(logs.getByTestId("stream-status")).toHaveText(/Following/);
        await expect(lines).toContainText(`${marker} cherry`, streaming);
      });

      await test.step("shell: a command's output, a resize, the exit code", async () => {
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

        await typeLine(admin, "echo ring0-$((6*7))");
        await expect.poll(() => terminalText(terminal), streaming).toMatch(/^ring0-42$/m);

        const sizeOf = async (label: string) => {
          const found = new RegExp(`^${label} (\\d+) (\\d+)\\s*$`, "m").exec(await terminalText(terminal));
          return found ? { rows: Number(found[1]), cols: Number(found[2]) } : undefined;
        };
        await typeLine(admin, "echo size-before $(stty size)");
        await expect.poll(() => sizeOf("size-before"), streaming).toBeDefined();
        const before = (await sizeOf("size-before")) as { rows: number; cols: number };
        // The shell's terminal has as many rows as xterm draws.
        expect(before.rows).toBe(await terminal.locator(".xterm-rows > div").count());

        const viewport = admin.viewportSize() ?? { width: 1280, height: 720 };
        const wide = (await terminal.boundingBox())?.width ?? 0;
        await admin.setViewportSize({ width: Math.round(viewport.width * 0.6), height: viewport.height });
        await expect.poll(async () => (await terminal.boundingBox())?.width ?? wide).toBeLessThan(wide);
        // The new size reaches the shell as a resize frame; ask again until it shows.
        let attempt = 0;
        await expect(async () => {
          attempt += 1;
          await typeLine(admin, `echo size-after-${attempt} $(stty size)`);
          const label = `size-after-${attempt}`;
          await expect.poll(() => sizeOf(label), { timeout: 5_000 }).toBeDefined();
          expect((await sizeOf(label))?.cols).toBeLessThan(before.cols);
        }).toPass(streaming);
        await admin.setViewportSize(viewport);

        await typeLine(admin, "exit 3");
        await expect(shell.getByTestId("exec-exit")).toContainText("Shell exited with code 3", streaming);
      });

      await test.step("audit: the session is in the tenant's Shell sessions with its exit code", async () => {
        await admin.goto("/t/acme/audit");
        const session = admin
          .getByRole("table", { name: "Shell sessions" })
          .getByRole("row")
          .filter({ hasText: `default/${name}` });
        await expect(async () => {
          await admin.reload();
          await expect(session).toContainText("exit code 3", { timeout: 3_000 });
        }).toPass(streaming);
      });

      await test.step("operator: the node's vn-agent log has the requests for acme", async () => {
        const operator = await loginAs("operator");
        await operator.goto(`/operator/nodes/${node}`);
        await expect(operator.getByRole("heading", { name: "Node logs" })).toBeVisible();
        await operator.getByRole("tab", { name: "vn-agent log" }).click();
        const agent = operator.getByRole("tabpanel", { name: "vn-agent log" });
        const agentLines = agent.getByRole("log", { name: `vn-agent log of node ${node}` });
        await expect(agentLines).not.toHaveAttribute("data-count", "0", streaming);
        await agent.getByRole("searchbox", { name: "Search logs" }).fill("tenant=acme");
        await agent.getByRole("checkbox", { name: "Only matching lines" }).check();
        await expect(agentLines).toContainText(/request.*tenant=acme/, streaming);
      });

      await test.step("operator: a node shell runs on that node, and its pod goes with the shell", async () => {
        const operator = await loginAs("operator");
        await operator.goto(`/operator/nodes/${node}`);
        await operator.getByRole("tab", { name: "Node shell" }).click();
        const panel = operator.getByRole("tabpanel", { name: "Node shell" });
        await panel.getByRole("combobox", { name: "Shell" }).selectOption("sh");
        await panel.getByRole("button", { name: "Connect" }).click();
        await expect(panel.getByTestId("exec-started")).toContainText("Connected: sh", streaming);
        const terminal = panel.getByTestId("exec-terminal");
        await terminal.click();
        await typeLine(operator, "echo node-$((6*7))");
        await expect.poll(() => terminalText(terminal), streaming).toMatch(/^node-42$/m);
        await typeLine(operator, "exit");
        await expect(panel.getByTestId("exec-exit")).toContainText("exited with code 0", streaming);
        await operator.goto("/operator/audit");
        await expect(
          operator
            .getByRole("table", { name: "Audit log" })
            .getByRole("row")
            .filter({ hasText: "node.shell" })
            .first(),
        ).toContainText(node, streaming);
      });

      await test.step("abuse: another tenant, a foreign Origin, no session", async () => {
        const podLogs = `/ws/logs?source=tenant-pod&tenant=acme&namespace=default&pod=${name}`;

        const globex = await loginAs("tenant-admin", "globex");
        const foreign = await socketFromPage(globex, podLogs);
        expect(foreign.code).toBe(4404);
        expect(JSON.parse(foreign.frames[0] ?? "{}")).toMatchObject({ type: "error", status: 404 });
        expect(foreign.frames).toHaveLength(1);

        // The admin's own session cookie, sent from a page of another site.
        const cookies = await admin.context().cookies(e2eOrigin);
        const status = await new Promise<number>((resolve, reject) => {
          const socket = new NodeWebSocket(`${e2eOrigin.replace(/^http/, "ws")}${podLogs}`, {
            headers: {
              origin: "https://evil.example",
              cookie: cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join("; "),
            },
          });
          socket.on("unexpected-response", (_request, response) => {
            resolve(response.statusCode ?? 0);
            socket.terminate();
          });
          socket.on("open", () => {
            socket.terminate();
            reject(new Error("a foreign Origin got a stream"));
          });
          socket.on("error", () => undefined);
        });
        expect(status).toBe(403);

        await anonymous.goto("/signin");
        const signedOut = await socketFromPage(anonymous, podLogs);
        expect(signedOut.code).toBe(4401);
        expect(JSON.parse(signedOut.frames[0] ?? "{}")).toMatchObject({ type: "error", status: 401 });
      });
    } finally {
      try {
        kubectl?.(["delete", "pod", name, "-n", "default", "--wait=false"]);
      } catch {
        // Best effort: the pod goes with the run's state dir anyway.
      }
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  test("a tenant admin reads a workload's logs by owner; an operator finds its pod in the super cluster and reads its logs", async ({
    loginAs,
  }) => {
    const name = `owned-${Math.random().toString(36).slice(2, 8)}`;
    const marker = `ring0-e2e-${name}`;
    const admin = await loginAs("tenant-admin", "acme");
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-streams-"));
    let kubectl: ((args: string[]) => string) | null = null;
    try {
      kubectl = await kubectlThroughPortal(admin, work);
      kubectl(["create", "deployment", name, "--image=nginx", "--replicas=2", "-n", "default"]);
      const logsFileOf = (pod: string) =>
        simulatedPodLogFile(e2eStateDir, superNamespace("acme", "default"), pod);

      let podNames: string[] = [];
      await test.step("the Workloads list shows the pods' owner and opens its logs", async () => {
        await new AppShell(admin).open("Workloads");
        const pods = admin.getByRole("table", { name: "Pods" });
        const rows = pods.getByRole("row").filter({ hasText: `${name}-` });
        await expect(rows).toHaveCount(2, syncing);
        await expect(rows.nth(0)).toContainText("Running", syncing);
        await expect(rows.nth(1)).toContainText("Running", syncing);
        await expect(rows.nth(0)).toContainText(`ReplicaSet ${name}-`);
        podNames = (await rows.getByRole("link", { name: new RegExp(`^${name}-`) }).allTextContents()).map(
          (text) => text.trim(),
        );
        expect(podNames).toHaveLength(2);
        for (const pod of podNames)
          await expect.poll(() => fs.existsSync(logsFileOf(pod)), syncing).toBe(true);

        const open = rows.nth(0).getByRole("link", { name: new RegExp(`^Logs of ReplicaSet ${name}-`) });
        await expect(open).toHaveText("Logs (2 pods)");
        await open.click();
        await expect(
          admin.getByRole("heading", { level: 1, name: new RegExp(`^Logs of ReplicaSet ${name}-`) }),
        ).toBeVisible();
        await expect(admin.getByRole("status", { name: "Pods left out" })).toHaveCount(0);
      });

      await test.step("the merged view has lines from both pods as they write them", async () => {
        const lines = admin.getByRole("log", { name: "Logs of 2 pods" });
        await expect(lines).toContainText("simulated pod", streaming);
        const legend = admin.getByRole("list", { name: "Pods" });
        for (const pod of podNames) await expect(legend).toContainText(pod);
        for (const pod of podNames) fs.appendFileSync(logsFileOf(pod), criLine(`${marker} from ${pod}`));
        for (const pod of podNames) await expect(lines).toContainText(`${marker} from ${pod}`, streaming);
      });

      await test.step("operator: /operator/pods lists the synced pod with its tenant; its page streams its logs", async () => {
        const pod = podNames[0] ?? "";
        const operator = await loginAs("operator");
        await operator.goto("/operator");
        await new AppShell(operator).open("Pods");
        await expect(operator.getByRole("heading", { level: 1, name: "Pods" })).toBeVisible();
        await operator.getByRole("combobox", { name: "Tenant" }).selectOption("acme");
        await operator.getByRole("searchbox", { name: "Search" }).fill(pod);
        const table = operator.getByRole("table", { name: "Super-cluster pods" });
        const row = table.getByRole("row").filter({ hasText: pod });
        await expect(row).toHaveCount(1);
        await expect(row).toContainText(superNamespace("acme", "default"));
        await expect(row).toContainText("acme");
        await expect(row).toContainText("Running");
        await row.getByRole("link", { name: pod }).click();
        await expect(operator.getByRole("heading", { level: 1, name: `Pod ${pod}` })).toBeVisible();

        await operator.getByRole("tab", { name: "Logs" }).click();
        const logs = operator.getByRole("tabpanel", { name: "Logs" });
        const lines = logs.getByRole("log", { name: `Logs of pod ${pod}` });
        await expect(lines).toContainText("simulated pod", streaming);
        await expect(lines).toContainText(`${marker} from ${pod}`, streaming);
        fs.appendFileSync(logsFileOf(pod), criLine(`${marker} for the operator`));
        await expect(lines).toContainText(`${marker} for the operator`, streaming);
      });
    } finally {
      try {
        kubectl?.(["delete", "deployment", name, "-n", "default", "--wait=false"]);
      } catch {
        // Best effort: the pods go with the run's state dir anyway.
      }
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
