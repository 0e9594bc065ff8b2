import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { kubectlBinary } from "./kubectl";
import { AppShell } from "./pages/app-shell";

/** The seeded tenants' control planes are provisioned at start; the first test may wait for them. */
const provisioning = { timeout: 240_000 };
/** Synced down, scheduled on a kwok node, status synced back up. */
const syncing = { timeout: 90_000 };

/** kubectl with a kubeconfig downloaded through the portal's form, as a tenant admin would. */
async function kubectlThroughPortal(page: Page, work: string) {
  await expect(page.getByRole("region", { name: "Control plane" })).toContainText(
    /Phase\s*Ready/,
    provisioning,
  );
  const form = page.getByRole("form", { name: "Download kubeconfig" });
  await form.getByLabel("Expires after").selectOption({ label: "1 day" });
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    form.getByRole("button", { name: "Download kubeconfig" }).click(),
  ]);
  const file = path.join(work, "acme.kubeconfig");
  await download.saveAs(file);
  return (args: string[]) =>
    execFileSync(kubectlBinary(), ["--kubeconfig", file, ...args], {
      encoding: "utf8",
      env: { ...process.env, HOME: work, KUBECONFIG: file },
      timeout: 60_000,
    });
}

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
      const row = page.getByRole("table", { name: "Pods" }).getByRole("row", { name: new RegExp(name) });
      await expect(row).toContainText("Running", syncing);
      const node = (await row.getByRole("cell").nth(3).textContent())?.trim() ?? "";
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
