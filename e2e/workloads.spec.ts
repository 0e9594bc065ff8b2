import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "./fixtures";
import { kubectlThroughPortal } from "./kubectl";
import { AppShell } from "./pages/app-shell";

/** Synced down, scheduled on a kwok node, status synced back up. */
const syncing = { timeout: 90_000 };

test.describe("workloads and the syncer", () => {
  test.setTimeout(360_000);

  test("acme's pod runs on a vNode in Workloads; the operator sees acme in the syncer and on the node", async ({
    loginAs,
  }) => {
    const name = `web-${Math.random().toString(36).slice(2, 8)}`;
    const page = await loginAs("tenant-admin", "acme");
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-workloads-"));
    let kubectl: ((args: string[]) => string) | null = null;
    try {
      kubectl = await kubectlThroughPortal(page, work);
      kubectl(["run", name, "--image=nginx", "-n", "default"]);

      await new AppShell(page).open("Workloads");
      await expect(page).toHaveURL(/\/t\/acme\/workloads$/);
      await expect(page.getByRole("status", { name: "Pods: live" })).toBeVisible();
      const pods = page.getByRole("table", { name: "Pods" });
      const row = pods.getByRole("row", { name: new RegExp(name) });
      await expect(row).toContainText("Running", syncing);
      // By its header, not its position: the table's columns may grow.
      const nodeColumn = (await pods.getByRole("columnheader").allTextContents()).indexOf("Node");
      expect(nodeColumn).toBeGreaterThanOrEqual(0);
      const node = (await row.getByRole("cell").nth(nodeColumn).textContent())?.trim() ?? "";
      expect(node).toMatch(/^[a-z0-9][-a-z0-9.]*$/);

      await row.getByRole("link", { name }).click();
      await expect(page.getByRole("heading", { level: 1, name: `Pod ${name}` })).toBeVisible();
      await expect(
        page.getByRole("table", { name: "Containers" }).getByRole("row", { name: /nginx/ }),
      ).toContainText("running");
      await expect(page.getByRole("table", { name: "Conditions" })).toContainText("Ready");
      await expect(page.getByRole("heading", { name: "Events" })).toBeVisible();

      const operator = await loginAs("operator");
      await new AppShell(operator).open("Syncer");
      await expect(
        operator
          .getByRole("table", { name: "Syncer health per tenant" })
          .getByRole("row", { name: /^acme\s/ }),
      ).toBeVisible(syncing);
      await expect(operator.getByRole("status", { name: "Syncer health: live" })).toBeVisible();

      await operator.goto("/operator/tenants/acme");
      await expect(operator.getByRole("heading", { name: "Syncer" })).toBeVisible();
      await expect(operator.getByRole("table", { name: "Syncer health" })).toBeVisible(syncing);

      await operator.goto(`/operator/nodes/${node}`);
      const tenants = operator.getByRole("table", { name: "Tenants on this node" });
      const acme = tenants.getByRole("row", { name: /^acme\s/ });
      await expect(acme).toBeVisible(syncing);
      await acme.getByRole("link", { name: "acme" }).click();
      await expect(operator).toHaveURL(/\/operator\/tenants\/acme$/);
    } finally {
      try {
        kubectl?.(["delete", "pod", name, "-n", "default", "--wait=false"]);
      } catch {
        // Best effort: the pod goes with the run's state dir anyway.
      }
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
