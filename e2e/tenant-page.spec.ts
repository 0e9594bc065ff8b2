import { expect, test } from "./fixtures";
import { AppShell } from "./pages/app-shell";
import { TenantPage } from "./pages/tenant-page";

// Unique per run: a tenant still being torn down by an earlier run cannot collide.
const tenant = `e2e-page-${Date.now().toString(36)}`;
const displayName = "E2E tenant page";

test.describe("A tenant's page in the operator console", () => {
  test("an operator opens a tenant they created, follows it live, suspends and resumes it", async ({
    loginAs,
  }) => {
    // The real tenant controller provisions, stops and starts a control plane here.
    test.setTimeout(300_000);
    const page = await loginAs("operator");
    await new AppShell(page).open("Tenants");
    await expect(page.getByRole("status", { name: "Tenant list: live" })).toBeVisible();

    const form = page.getByRole("form", { name: "Create tenant" });
    await form.getByLabel("Name", { exact: true }).fill(tenant);
    await form.getByLabel("Display name").fill(displayName);
    await form.getByRole("button", { name: "Create tenant" }).click();
    await expect(form.getByRole("alert")).toHaveCount(0);

    const row = page.getByRole("table", { name: "Tenants" }).getByRole("row", { name: new RegExp(tenant) });
    await expect(row).toContainText(displayName);
    await expect(row).toContainText("local");
    await row.getByRole("link", { name: tenant }).click();

    const tenantPage = new TenantPage(page, tenant);
    await expect(page).toHaveURL(new RegExp(`/operator/tenants/${tenant}$`));
    await expect(page.getByRole("heading", { level: 1, name: displayName })).toBeVisible();
    await expect(tenantPage.live()).toBeVisible();
    await expect(tenantPage.summary()).toContainText("local");
    await expect(tenantPage.timeline().getByRole("listitem").first()).toContainText("Created");
    await expect(tenantPage.timeline()).toContainText("Ready");
    await expect(page.getByRole("heading", { level: 2, name: "Conditions", exact: true })).toBeVisible();
    await expect(page.getByRole("heading", { level: 2, name: "Events", exact: true })).toBeVisible();
    // The controller reconciles the new tenant: conditions and phase Events arrive without a reload.
    await expect(tenantPage.conditions().getByRole("row", { name: /ControlPlaneReady/ })).toBeVisible({
      timeout: 60_000,
    });
    await expect(tenantPage.events().getByRole("row", { name: /Provisioning/ })).toBeVisible({
      timeout: 60_000,
    });

    // Break-glass: a plain form with a required reason, explained as audited.
    const breakGlass = tenantPage.breakGlassForm();
    await expect(breakGlass).toContainText("audited");
    await expect(breakGlass.getByLabel(/Reason/)).toHaveAttribute("required", "");
    await expect(breakGlass).toHaveAttribute("method", "post");
    await expect(breakGlass).toHaveAttribute("action", `/api/tenants/${tenant}/admin-kubeconfig`);

    await tenantPage.expectPhase("Ready", 120_000);
    await expect(tenantPage.timeline().getByRole("listitem").last()).toContainText("Ready");
    await expect(page.getByRole("table", { name: "Conditions" })).toContainText("DefaultsApplied");

    await tenantPage.setSuspended(true);
    // The spec changes at once (the action flips to Resume); the phase follows once the controller stopped it.
    await expect(page.getByRole("button", { name: "Resume…" })).toBeVisible();
    await tenantPage.expectPhase("Suspended", 120_000);
    await expect(tenantPage.timeline()).toContainText("Suspended");

    await tenantPage.setSuspended(false);
    await expect(page.getByRole("button", { name: "Suspend…" })).toBeVisible();
    await tenantPage.expectPhase("Ready", 120_000);
    await expect(tenantPage.timeline()).toContainText("Ready again");

    // Serving again: the break-glass download is a file the browser saves (never page script).
    await breakGlass.getByLabel(/Reason/).fill("e2e: checking the break-glass download");
    const download = page.waitForEvent("download");
    await breakGlass.getByRole("button", { name: "Download admin kubeconfig" }).click();
    expect((await download).suggestedFilename()).toContain(tenant);
    await expect(page).toHaveURL(new RegExp(`/operator/tenants/${tenant}$`));

    await tenantPage.delete();
    await expect(
      page.getByRole("table", { name: "Tenants" }).getByRole("row", { name: new RegExp(tenant) }),
    ).toHaveCount(0, { timeout: 60_000 });
  });

  test("a tenant that does not exist is not found", async ({ loginAs }) => {
    const page = await loginAs("operator");
    await page.goto("/operator/tenants/no-such-tenant");
    await new AppShell(page).expectNotFound();
  });

  test("tenant admins cannot open a tenant's operator page", async ({ loginAs }) => {
    const page = await loginAs("tenant-admin", "acme");
    await page.goto("/operator/tenants/acme");
    await new AppShell(page).expectNotFound();
    const input = encodeURIComponent(JSON.stringify({ json: { name: "acme" } }));
    expect((await page.request.get(`/api/trpc/tenants.get?input=${input}`)).status()).toBe(403);
  });
});
