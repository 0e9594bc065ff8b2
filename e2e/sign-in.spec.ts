import { expect, signInThroughIam, test } from "./fixtures";
import { AppShell } from "./pages/app-shell";
import { IamLoginPage } from "./pages/iam-login-page";

test.describe("signing in through the IAM", () => {
  test("an operator lands in the operator console", async ({ page, shell }) => {
    await page.goto("/");
    await expect(page).toHaveURL(/\/signin$/);
    await signInThroughIam(page, "operator");
    await expect(page).toHaveURL(/\/operator$/);
    await expect(shell.heading("Fleet overview")).toBeVisible();
    await expect(shell.whoami()).toContainText("Olivia Operator");
    await expect(shell.whoami()).toContainText("system");
    await expect(shell.nav("Operator console")).toBeVisible();
  });

  test("a tenant admin lands in their tenant portal", async ({ page, shell }) => {
    await signInThroughIam(page, "globex-admin");
    await expect(page).toHaveURL(/\/t\/globex$/);
    await expect(shell.heading("Tenant globex")).toBeVisible();
    await expect(shell.whoami()).toContainText("Tenant admin");
    await expect(shell.whoami()).toContainText("globex");
  });

  test("a deep link survives sign-in", async ({ page }) => {
    await page.goto("/t/acme/members");
    await expect(page).toHaveURL(/\/signin\?callbackUrl=/);
    await page.getByRole("button", { name: /^Sign in with/ }).click();
    await new IamLoginPage(page).signIn("acme-member", "ring0-demo");
    await expect(page).toHaveURL(/\/t\/acme\/members$/);
    await expect(page.getByRole("table", { name: "Members" })).toBeVisible();
  });

  test("a wrong password shows an error and keeps the user on the IAM page", async ({ page }) => {
    await page.goto("/signin");
    await page.getByRole("button", { name: /^Sign in with/ }).click();
    const iam = new IamLoginPage(page);
    await iam.signIn("acme-admin", "not-the-password");
    await expect(iam.error()).toHaveText("Invalid username or password.");
    await expect(page.getByLabel("Username")).toHaveValue("acme-admin");
    await iam.signIn("nobody-here", "ring0-demo");
    await expect(iam.error()).toHaveText("Invalid username or password.");
  });

  test("sign-out ends the Ring0 and the IAM session", async ({ page }) => {
    await signInThroughIam(page, "acme-admin");
    await expect(page).toHaveURL(/\/t\/acme$/);
    await new AppShell(page).signOut();
    await page.goto("/t/acme");
    await expect(page).toHaveURL(/\/signin/);
    // The IAM session ended too: signing in asks for the password again.
    await page.getByRole("button", { name: /^Sign in with/ }).click();
    await new IamLoginPage(page).expectVisible();
  });
});
