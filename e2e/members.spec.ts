import { expect, signInThroughIam, test } from "./fixtures";
import { AppShell } from "./pages/app-shell";
import { IamLoginPage } from "./pages/iam-login-page";
import { trpcCall } from "./tenant-fixture";

test.describe("Members and accounts", () => {
  test("an admin creates an account that signs in with its one-time password, changes its role and disables it", async ({
    loginAs,
    browser,
    consoleErrors,
  }) => {
    test.setTimeout(90_000);
    const username = `e2e-${Date.now().toString(36)}`;
    const name = `E2E ${username}`;

    // The acme admin creates the account and sees its temporary password once.
    const admin = await loginAs("tenant-admin", "acme");
    await admin.goto("/t/acme/members");
    await new AppShell(admin).waitUntilLive();
    const form = admin.getByRole("form", { name: "Create an account" });
    await form.getByLabel("Name", { exact: true }).fill(name);
    await form.getByLabel("Username").fill(username);
    await form.getByLabel("Email").fill(`${username}@acme.example`);
    await form.getByLabel("Role").selectOption({ label: "Member" });
    await form.getByRole("button", { name: "Create account" }).click();
    const oneTime = admin.getByRole("region", { name: "One-time password" });
    const password = await oneTime.getByLabel("Temporary password").inputValue();
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const accountRow = admin
      .getByRole("table", { name: "Accounts" })
      .getByRole("row", { name: new RegExp(username) });
    await expect(accountRow).toContainText("active");
    await expect(
      admin.getByRole("table", { name: "Members" }).getByRole("row", { name: new RegExp(name) }),
    ).toBeVisible();
    await oneTime.getByRole("button", { name: "Done" }).click();
    await expect(admin.getByText(password)).toHaveCount(0);
    await new AppShell(admin).signOut();

    // The new person signs in through the IAM's page and lands in the acme portal.
    const context = await browser.newContext();
    const user = await context.newPage();
    user.on("console", (message) => {
      if (message.type() === "error" && !/status of (401|403|404)/.test(message.text())) {
        consoleErrors.push(`${user.url()}: ${message.text()}`);
      }
    });
    user.on("pageerror", (error) => consoleErrors.push(`${user.url()}: ${error.message}`));
    await signInThroughIam(user, username, password);
    await expect(user).toHaveURL(/\/t\/acme$/);
    const userShell = new AppShell(user);
    await userShell.waitUntilLive();
    await expect(userShell.whoami()).toContainText(name);
    await expect(userShell.whoami()).toContainText("Member");

    // The admin makes them a viewer; their portal shows it on the next request.
    const adminAgain = await loginAs("tenant-admin", "acme");
    await adminAgain.goto("/t/acme/members");
    await new AppShell(adminAgain).waitUntilLive();
    await adminAgain.getByLabel(`Role of ${name}`).selectOption({ label: "Viewer" });
    // The toast comes once the change is saved.
    await expect(adminAgain.getByText(`${name} is now Viewer.`)).toBeVisible();
    await user.reload();
    await userShell.waitUntilLive();
    await expect(userShell.whoami()).toContainText("Viewer");

    // Disabled: the open session ends, and the IAM refuses the password.
    await adminAgain
      .getByRole("table", { name: "Accounts" })
      .getByRole("button", { name: `Disable ${username}` })
      .click();
    await expect(
      adminAgain.getByRole("table", { name: "Accounts" }).getByRole("row", { name: new RegExp(username) }),
    ).toContainText("disabled");
    await user.goto("/t/acme");
    await expect(user).toHaveURL(/\/signin/);
    await signInThroughIam(user, username, password);
    await expect(new IamLoginPage(user).error()).toContainText("This account is disabled");
    await context.close();
  });

  test("an operator gives a new tenant its first admin account, which signs in with the one-time password", async ({
    loginAs,
    browser,
  }) => {
    test.setTimeout(90_000);
    const stamp = Date.now().toString(36);
    const tenant = `e2e-fa-${stamp}`;
    const username = `first-${stamp}`;
    const operator = await loginAs("operator");
    await operator.goto("/operator/tenants");
    await new AppShell(operator).waitUntilLive();
    const form = operator.getByRole("form", { name: "Create tenant" });
    await form.getByLabel("Name", { exact: true }).fill(tenant);
    await form.getByLabel("Display name").fill("E2E first admin");
    await form.getByLabel("Admin username").fill(username);
    await form.getByLabel("Admin name").fill("First Admin");
    await form.getByLabel("Admin email").fill(`${username}@example.com`);
    await form.getByRole("button", { name: "Create tenant" }).click();
    const password = await form
      .getByRole("region", { name: "One-time password" })
      .getByLabel("Temporary password")
      .inputValue();
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);

    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await signInThroughIam(page, username, password);
      await expect(page).toHaveURL(new RegExp(`/t/${tenant}$`));
      await expect(new AppShell(page).whoami()).toContainText("Tenant admin");
      await context.close();
    } finally {
      await trpcCall(operator.request, "tenants.delete", { name: tenant, confirm: tenant }, "mutation");
    }
  });
});
