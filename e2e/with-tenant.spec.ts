/**
 * The withTenant fixture in use: a fresh tenant per test, with accounts for its admin and member.
 * Checks what the RBAC defaults give each role inside the new control plane, through the browser's
 * kubeconfig download and the real kubectl.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser } from "@playwright/test";
import { expect, signInThroughIam, test } from "./fixtures";
import { kubectlBinary } from "./kubectl";
import type { TenantAccount } from "./tenant-fixture";

/** Signs the account in, downloads its kubeconfig for `tenant`, returns a kubectl runner. */
async function kubectlAs(browser: Browser, tenant: string, account: TenantAccount, dir: string) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await signInThroughIam(page, account.username, account.password);
    await expect(page).toHaveURL(new RegExp(`/t/${tenant}$`));
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page
        .getByRole("form", { name: "Download kubeconfig" })
        .getByRole("button", { name: "Download kubeconfig" })
        .click(),
    ]);
    const file = path.join(dir, `${account.username}.kubeconfig`);
    await download.saveAs(file);
    return (...args: string[]) =>
      spawnSync(kubectlBinary(), ["--kubeconfig", file, ...args], {
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", HOME: dir, NODE_ENV: "test" },
        timeout: 60_000,
      });
  } finally {
    await context.close();
  }
}

test.describe("a provisioned tenant per test (withTenant)", () => {
  test.setTimeout(300_000);

  test("its admin manages namespaces, its member edits workloads but not namespaces or Ring0's RBAC", async ({
    withTenant,
    browser,
  }) => {
    const tenant = await withTenant();
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-with-tenant-"));
    try {
      const admin = await kubectlAs(browser, tenant.name, tenant.admin, work);
      const member = await kubectlAs(browser, tenant.name, tenant.member, work);

      expect(admin("create", "namespace", "team").status).toBe(0);
      const created = member("-n", "team", "create", "configmap", "settings", "--from-literal=a=b");
      expect(created.status, created.stderr).toBe(0);
      expect(member("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout).toBe(
        `${tenant.name}:${tenant.member.username}`,
      );

      const deleteNamespace = member("delete", "namespace", "team", "--wait=false");
      expect(deleteNamespace.status).not.toBe(0);
      expect(deleteNamespace.stderr).toContain("forbidden");
      const deleteBinding = admin("delete", "clusterrolebinding", "ring0:tenant-members");
      expect(deleteBinding.stderr).toContain("managed by Ring0");
      expect(admin("delete", "namespace", "team", "--wait=false").status).toBe(0);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
