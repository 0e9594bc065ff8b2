import { expect, test } from "./fixtures";
import { AppShell } from "./pages/app-shell";

test.describe("console and portal shell", () => {
  test("operators read every tenant's audit events", async ({ loginAs }) => {
    await loginAs("tenant-admin", "globex");
    const page = await loginAs("operator");
    const shell = new AppShell(page);
    await shell.open("Audit log");
    await expect(shell.heading("Audit log")).toBeVisible();
    const table = page.getByRole("table");
    await expect(table.getByRole("row").filter({ hasText: "globex" }).first()).toBeVisible();
    await expect(table.getByRole("row").filter({ hasText: "Olivia Operator" }).first()).toBeVisible();
  });

  test("tenant admins read only their tenant's audit events", async ({ loginAs }) => {
    await loginAs("tenant-admin", "globex");
    const page = await loginAs("tenant-admin", "acme");
    const shell = new AppShell(page);
    await shell.open("Audit log");
    await expect(page).toHaveURL(/\/t\/acme\/audit$/);
    await expect(page.getByRole("table").getByText("auth.sign-in").first()).toBeVisible();
    // globex's own events (its users signing in) never show. acme's log does name globex's users
    // where they acted on acme through a sharing grant (share.used, refusals): those are acme's.
    const rows = page.getByRole("table").getByRole("row");
    await expect(rows.filter({ hasText: "auth.sign-in" }).filter({ hasText: "globex" })).toHaveCount(0);
  });

  test("members see no audit log", async ({ loginAs }) => {
    const page = await loginAs("tenant-member", "acme");
    await page.goto("/t/acme");
    await expect(
      new AppShell(page).nav("Tenant portal").getByRole("link", { name: "Audit log" }),
    ).toHaveCount(0);
    await page.goto("/t/acme/audit");
    await new AppShell(page).expectNotFound();
  });

  test("the operator console lists tenants and links to their portals", async ({ loginAs }) => {
    await loginAs("tenant-member", "globex");
    const page = await loginAs("operator");
    await page.goto("/operator");
    const tenants = page.getByRole("table", { name: "Tenants" });
    await expect(tenants.getByRole("link", { name: "globex" })).toBeVisible();
    await tenants.getByRole("link", { name: "globex" }).click();
    await expect(new AppShell(page).heading("Tenant globex")).toBeVisible();
  });

  test("the theme switches to dark and stays after a reload", async ({ loginAs }) => {
    const page = await loginAs("tenant-admin", "acme");
    await page.goto("/t/acme");
    await new AppShell(page).setTheme("Dark theme");
    await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
    await page.reload();
    await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
    await expect(page.getByRole("combobox", { name: "Theme" })).toHaveValue("dark");
    await new AppShell(page).setTheme("Light theme");
    await expect(page.locator("html")).toHaveAttribute("data-theme", "light");
  });

  test("the server heartbeat streams over SSE", async ({ loginAs }) => {
    const page = await loginAs("tenant-member", "acme");
    await page.goto("/t/acme");
    await expect(page.getByRole("status", { name: "Server connection: Live" })).toBeVisible();
  });
});
