import { expect, test } from "./fixtures";
import { AppShell } from "./pages/app-shell";
import { trpcCall } from "./tenant-fixture";

const tenant = "e2e-t1";

test.describe("Tenant resources in the operator console", () => {
  test("an operator creates a tenant, sees it appear live, and deletes it with the typed name", async ({
    loginAs,
  }) => {
    const page = await loginAs("operator");
    // A tenant left behind by an interrupted run would make the create a conflict.
    await trpcCall(page.request, "tenants.delete", { name: tenant, confirm: tenant }, "mutation");

    await new AppShell(page).open("Tenants");
    await expect(page.getByRole("heading", { level: 1, name: "Tenants" })).toBeVisible();
    await expect(page.getByRole("status", { name: "Tenant list: live" })).toBeVisible();

    const form = page.getByRole("form", { name: "Create tenant" });
    await form.getByLabel("Name", { exact: true }).fill("Bad_Name");
    await form.getByLabel("Display name").fill("Bad");
    await form.getByRole("button", { name: "Create tenant" }).click();
    await expect(form.getByRole("alert")).toContainText("name:");

    await form.getByLabel("Name", { exact: true }).fill(tenant);
    await form.getByLabel("Display name").fill("E2E tenant one");
    await form.getByLabel("Version").selectOption("1.36");
    await form.getByLabel("Provisioner").selectOption("local");
    await form.getByLabel("Admins (comma-separated)").fill("acme-admin, bob");
    await form.getByRole("button", { name: "Create tenant" }).click();
    await expect(form.getByRole("alert")).toHaveCount(0);

    const row = page.getByRole("table", { name: "Tenants" }).getByRole("row", { name: new RegExp(tenant) });
    await expect(row).toContainText("E2E tenant one");
    // The controller picks it up at once: any phase of its way to Ready.
    await expect(row).toContainText(/Pending|Provisioning|Ready/);
    await expect(row).toContainText("1.36");

    await row.getByRole("button", { name: `Delete ${tenant}` }).click();
    const confirm = page.getByRole("form", { name: `Delete tenant ${tenant}` });
    const submit = confirm.getByRole("button", { name: `Delete ${tenant}` });
    await confirm.getByLabel("Type the tenant's name to confirm").fill("e2e-t");
    await expect(submit).toBeDisabled();
    await confirm.getByLabel("Type the tenant's name to confirm").fill(tenant);
    await submit.click();
    await expect(row).toHaveCount(0);
    await expect(confirm).toHaveCount(0);
  });

  test("tenant users cannot see the tenants page", async ({ loginAs }) => {
    const page = await loginAs("tenant-admin", "acme");
    await page.goto("/operator/tenants");
    await new AppShell(page).expectNotFound();
    expect((await page.request.get("/api/trpc/tenants.resources")).status()).toBe(403);
  });
});
