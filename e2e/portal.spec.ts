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

async function waitForReadyControlPlane(page: Page) {
  const card = page.getByRole("region", { name: "Control plane" });
  await expect(card).toContainText(/Phase\s*Ready/, provisioning);
  return card;
}

async function openNamespaces(page: Page) {
  await new AppShell(page).open("Namespaces");
  await expect(page).toHaveURL(/\/t\/acme\/namespaces$/);
  await expect(page.getByRole("table", { name: "Namespaces" })).toBeVisible(provisioning);
}

test.describe("tenant portal", () => {
  test.setTimeout(300_000);

  test("an admin sees the control plane become Ready, downloads a kubeconfig and uses it with kubectl", async ({
    loginAs,
  }) => {
    const page = await loginAs("tenant-admin", "acme");
    const card = await waitForReadyControlPlane(page);
    await expect(card).toContainText("/k8s/tenants/acme");
    await expect(card.getByRole("status", { name: "Control plane status: live" })).toBeVisible();

    const form = page.getByRole("form", { name: "Download kubeconfig" });
    await form.getByLabel("Expires after").selectOption({ label: "1 day" });
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      form.getByRole("button", { name: "Download kubeconfig" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("acme.kubeconfig");
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-portal-"));
    try {
      const file = path.join(work, "acme.kubeconfig");
      await download.saveAs(file);
      const kubeconfig = fs.readFileSync(file, "utf8");
      expect(kubeconfig).toContain("/k8s/tenants/acme");
      expect(kubeconfig).toMatch(/token: "?r0_/);

      const namespaces = execFileSync(kubectlBinary(), ["--kubeconfig", file, "get", "ns", "-o", "name"], {
        encoding: "utf8",
        env: { ...process.env, HOME: work, KUBECONFIG: file },
        timeout: 60_000,
      });
      expect(namespaces).toContain("namespace/kube-system");
      expect(namespaces).toContain("namespace/default");
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }

    // The download is an API token of the admin's, revocable on the tokens page.
    await page.getByRole("link", { name: "API tokens" }).first().click();
    await expect(
      page
        .getByRole("table", { name: "Tokens" })
        .getByRole("row", { name: /kubeconfig \d{4}-\d{2}-\d{2}/ })
        .first(),
    ).toContainText("active");
  });

  test("an admin creates and deletes a namespace", async ({ loginAs }) => {
    const page = await loginAs("tenant-admin", "acme");
    await openNamespaces(page);
    const name = `e2e-${Math.random().toString(36).slice(2, 8)}`;
    const create = page.getByRole("form", { name: "Create namespace" });

    await create.getByLabel("Namespace name").fill("Not_Valid");
    await create.getByRole("button", { name: "Create namespace" }).click();
    await expect(create.getByRole("alert")).toContainText("name: expected a DNS-1123 label");

    await create.getByLabel("Namespace name").fill(name);
    await create.getByRole("button", { name: "Create namespace" }).click();
    const row = page.getByRole("table", { name: "Namespaces" }).getByRole("row", { name: new RegExp(name) });
    await expect(row).toContainText("Active");

    await row.getByRole("button", { name: `Delete ${name}` }).click();
    const confirm = page.getByRole("form", { name: `Delete namespace ${name}` });
    await expect(confirm.getByRole("button", { name: `Delete ${name}` })).toBeDisabled();
    await confirm.getByLabel("Type the namespace's name to confirm").fill(name);
    await confirm.getByRole("button", { name: `Delete ${name}` }).click();
    // Terminating while the namespace controller empties it, then gone.
    await expect(row).toHaveCount(0, { timeout: 60_000 });
  });

  test("a member cannot delete a namespace: the control plane's refusal is shown", async ({ loginAs }) => {
    const page = await loginAs("tenant-member", "acme");
    await openNamespaces(page);
    await page
      .getByRole("table", { name: "Namespaces" })
      .getByRole("button", { name: "Delete kube-public" })
      .click();
    const confirm = page.getByRole("form", { name: "Delete namespace kube-public" });
    await confirm.getByLabel("Type the namespace's name to confirm").fill("kube-public");
    await confirm.getByRole("button", { name: "Delete kube-public" }).click();
    await expect(confirm.getByRole("alert")).toContainText(
      'User "acme:acme-member" cannot delete resource "namespaces"',
    );
    await expect(
      page.getByRole("table", { name: "Namespaces" }).getByRole("row", { name: /kube-public/ }),
    ).toContainText("Active");
  });

  test("a globex user cannot open acme's portal pages", async ({ loginAs }) => {
    const page = await loginAs("tenant-admin", "globex");
    const shell = new AppShell(page);
    for (const target of ["/t/acme", "/t/acme/namespaces"]) {
      await page.goto(target);
      await shell.expectNotFound();
    }
    await expect(page.getByText("/k8s/tenants/acme")).toHaveCount(0);
    const input = encodeURIComponent(JSON.stringify({ json: { tenant: "acme" } }));
    for (const procedure of ["controlPlane.summary", "controlPlane.namespaces.list"]) {
      expect((await page.request.get(`/api/trpc/${procedure}?input=${input}`)).status()).toBe(404);
    }
  });
});
