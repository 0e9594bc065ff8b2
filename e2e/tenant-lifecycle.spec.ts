/**
 * The "done when", end to end on real parts: an operator creates `acme2` in the browser
 * (with its first admin account), watches it become Ready; that admin signs in, downloads a
 * kubeconfig and uses kubectl through the kube gateway; a user of another tenant is refused in the
 * portal and with a forged kubeconfig; deleting the tenant leaves no process, port, file or token.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import { processesMentioning } from "@/server/cluster/process";
import { expect, signInThroughIam, test } from "./fixtures";
import { kubectlBinary } from "./kubectl";
import { AppShell } from "./pages/app-shell";
import { TenantPage } from "./pages/tenant-page";
import { e2eStateDir } from "./ports";
import { removeTenant } from "./tenant-fixture";

const tenant = "acme2";
const slow = { timeout: 180_000 };

function kubectl(kubeconfig: string, args: string[]) {
  const home = path.dirname(kubeconfig);
  return spawnSync(kubectlBinary(), ["--kubeconfig", kubeconfig, ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: home, NODE_ENV: "test" },
    timeout: 60_000,
  });
}

/** Downloads a kubeconfig through the portal's form and saves it under `dir`. */
async function downloadKubeconfig(page: Page, forTenant: string, dir: string): Promise<string> {
  await page.goto(`/t/${forTenant}`);
  const form = page.getByRole("form", { name: "Download kubeconfig" });
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    form.getByRole("button", { name: "Download kubeconfig" }).click(),
  ]);
  const file = path.join(dir, `${forTenant}.kubeconfig`);
  await download.saveAs(file);
  return file;
}

test.describe("a tenant's whole life", () => {
  test.setTimeout(420_000);

  test("create acme2 in the browser, use it with kubectl, keep others out, delete it without a trace", async ({
    loginAs,
    browser,
  }) => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-lifecycle-"));
    const operator = await loginAs("operator");
    // A run interrupted earlier (local reuse of the server) may have left acme2 behind.
    await removeTenant(operator.request, tenant);

    // 1. The operator creates acme2 with its first admin account.
    await new AppShell(operator).open("Tenants");
    const form = operator.getByRole("form", { name: "Create tenant" });
    await form.getByLabel("Name", { exact: true }).fill(tenant);
    await form.getByLabel("Display name").fill("Acme Two");
    await form.getByLabel("Version").selectOption("1.36");
    await form.getByLabel("Provisioner").selectOption("local");
    const firstAdmin = form.getByRole("group", { name: "First admin account (optional)" });
    await firstAdmin.getByLabel("Admin username").fill("acme2-admin");
    await firstAdmin.getByLabel("Admin name").fill("Ada Admin (Acme Two)");
    await firstAdmin.getByLabel("Admin email").fill("ada@acme2.example");
    await form.getByRole("button", { name: "Create tenant" }).click();
    const password = operator
      .getByRole("region", { name: "One-time password" })
      .getByLabel("Temporary password");
    await expect(password).toBeVisible();
    const temporaryPassword = await password.inputValue();
    expect(temporaryPassword.length).toBeGreaterThanOrEqual(12);

    // 2. It becomes Ready, live, in the list and on its page.
    const row = operator
      .getByRole("table", { name: "Tenants" })
      .getByRole("row", { name: new RegExp(tenant) });
    await expect(row).toContainText("Ready", slow);
    const page = new TenantPage(operator, tenant);
    await page.open();
    await page.expectPhase("Ready", 60_000);
    await expect(page.timeline()).toContainText("Ready");
    await expect(page.conditions()).toContainText("DefaultsApplied");

    // 3. Its admin signs in with the one-time password, downloads a kubeconfig and uses kubectl.
    const adminContext = await browser.newContext();
    try {
      const admin = await adminContext.newPage();
      await signInThroughIam(admin, "acme2-admin", temporaryPassword);
      await expect(admin).toHaveURL(/\/t\/acme2$/);
      await expect(admin.getByRole("region", { name: "Control plane" })).toContainText(/Phase\s*Ready/, slow);
      const kubeconfig = await downloadKubeconfig(admin, tenant, work);

      const get = kubectl(kubeconfig, ["get", "ns", "-o", "name"]);
      expect(get.status, get.stderr).toBe(0);
      expect(get.stdout).toContain("namespace/kube-system");
      const whoami = kubectl(kubeconfig, ["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]);
      expect(whoami.stdout).toBe("acme2:acme2-admin");
      expect(kubectl(kubeconfig, ["create", "namespace", "shop"]).status).toBe(0);
      const apply = spawnSync(kubectlBinary(), ["--kubeconfig", kubeconfig, "apply", "-f", "-"], {
        input: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {a: b}\n",
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", HOME: work, NODE_ENV: "test" },
      });
      expect(apply.status, apply.stderr).toBe(0);
      expect(
        kubectl(kubeconfig, ["auth", "can-i", "create", "deployments", "-n", "shop"]).stdout.trim(),
      ).toBe("yes");
      expect(kubectl(kubeconfig, ["auth", "can-i", "create", "nodes"]).stdout.trim()).toBe("no");

      // 4. Another tenant's user is refused: in the portal, and with their token on acme2's path.
      const globex = await loginAs("tenant-admin", "globex");
      await globex.goto(`/t/${tenant}`);
      await new AppShell(globex).expectNotFound();
      const globexKubeconfig = await downloadKubeconfig(globex, "globex", work);
      const forged = path.join(work, "forged.kubeconfig");
      fs.writeFileSync(
        forged,
        fs.readFileSync(globexKubeconfig, "utf8").replaceAll("/k8s/tenants/globex", `/k8s/tenants/${tenant}`),
      );
      const refused = kubectl(forged, ["get", "ns"]);
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toMatch(/not found/i);
      expect(refused.stdout).not.toContain("shop");

      // 5. The operator deletes acme2 from its page; nothing is left behind.
      await page.open();
      await page.delete();
      await expect(operator).toHaveURL(/\/operator\/tenants$/);
      await expect(
        operator
          .getByRole("table", { name: "Tenants" })
          .getByRole("row", { name: new RegExp(`^${tenant}\\b`) }),
      ).toHaveCount(0, slow);
      const tenantDir = path.resolve(e2eStateDir, "tenants", tenant);
      await expect.poll(() => fs.existsSync(tenantDir), { timeout: 60_000 }).toBe(false);
      expect(processesMentioning(tenantDir)).toEqual([]);
      // Its tokens were revoked with it: the old kubeconfig no longer authenticates.
      const after = kubectl(kubeconfig, ["get", "ns"]);
      expect(after.status).not.toBe(0);
      expect(after.stderr).toMatch(/unauthorized|must be logged in/i);
    } finally {
      await adminContext.close();
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
