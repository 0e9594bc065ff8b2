import fs from "node:fs";
import path from "node:path";
import { type Browser, test as base, expect, type Page } from "@playwright/test";
import { AppShell } from "./pages/app-shell";
import { IamLoginPage } from "./pages/iam-login-page";
import { e2eStateDir } from "./ports";
import {
  type ProvisionedTenant,
  provisionTenant,
  removeTenant,
  type WithTenantOptions,
} from "./tenant-fixture";

export type Role = "operator" | "tenant-admin" | "tenant-member";
export type DemoTenant = "acme" | "globex";

/** The embedded IAM's seeded accounts (server/iam/seed-accounts.json). */
export const demoPassword = "ring0-demo";
export function accountFor(role: Role, tenant: DemoTenant = "acme"): { username: string; tenant: string } {
  if (role === "operator") return { username: "operator", tenant: "system" };
  return { username: `${tenant}-${role === "tenant-admin" ? "admin" : "member"}`, tenant };
}

/**
 * Stored sign-ins live in the e2e instance's state dir: they are only valid for that instance's
 * secrets, and go when it is wiped.
 */
const authDir = path.resolve(e2eStateDir, "playwright-auth");

/** Signs in through the real pages: Ring0's sign-in page → the IAM's login form → back. */
export async function signInThroughIam(page: Page, username: string, password = demoPassword) {
  await page.goto("/signin");
  await page.getByRole("button", { name: /^Sign in with/ }).click();
  const iam = new IamLoginPage(page);
  await iam.expectVisible();
  await iam.signIn(username, password);
}

/** Signs in once per account and run, then reuses the stored cookies. */
async function storageStateFor(browser: Browser, role: Role, tenant: DemoTenant): Promise<string> {
  const { username } = accountFor(role, tenant);
  const file = path.join(authDir, `${username}.json`);
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(authDir, { recursive: true });
  const context = await browser.newContext();
  const page = await context.newPage();
  await signInThroughIam(page, username);
  await expect(page).toHaveURL(role === "operator" ? /\/operator$/ : new RegExp(`/t/${tenant}$`));
  await context.storageState({ path: file });
  await context.close();
  return file;
}

interface Fixtures {
  /**
   * A page signed in as a seeded user, on their landing page and hydrated, e.g.
   * `await loginAs("tenant-admin", "globex")`.
   */
  loginAs(role: Role, tenant?: DemoTenant): Promise<Page>;
  shell: AppShell;
  /**
   * A real tenant for this test only: provisioned (control plane Ready) with an admin and a member
   * account of the embedded IAM, deleted afterwards with everything it had. E.g.
   * `const acme3 = await withTenant(); await signInThroughIam(page, acme3.admin.username, acme3.admin.password)`.
   */
  withTenant(options?: WithTenantOptions): Promise<ProvisionedTenant>;
  /** Browser console errors and uncaught page errors of the test's pages: any one fails the test. */
  consoleErrors: string[];
}

/** Network refusals the tests provoke on purpose (404 pages, 401/403 API answers). */
const expectedConsoleNoise = /^Failed to load resource: the server responded with a status of (401|403|404)/;

function watchConsole(page: Page, errors: string[]) {
  page.on("console", (message) => {
    if (message.type() === "error" && !expectedConsoleNoise.test(message.text())) {
      errors.push(`${page.url()}: ${message.text()}`);
    }
  });
  page.on("pageerror", (error) => errors.push(`${page.url()}: ${error.message}`));
}

export const test = base.extend<Fixtures>({
  // biome-ignore lint/correctness/noEmptyPattern: Playwright fixtures take their dependencies as an object pattern
  consoleErrors: async ({}, use) => {
    const errors: string[] = [];
    await use(errors);
    expect(errors, "console errors during the test").toEqual([]);
  },
  page: async ({ page, consoleErrors }, use) => {
    watchConsole(page, consoleErrors);
    await use(page);
  },
  loginAs: async ({ browser, consoleErrors }, use) => {
    const contexts: Array<{ close(): Promise<void> }> = [];
    await use(async (role, tenant = "acme") => {
      const context = await browser.newContext({
        storageState: await storageStateFor(browser, role, tenant),
      });
      contexts.push(context);
      const page = await context.newPage();
      watchConsole(page, consoleErrors);
      await page.goto("/");
      await expect(page).toHaveURL(role === "operator" ? /\/operator$/ : new RegExp(`/t/${tenant}$`));
      await new AppShell(page).waitUntilLive();
      return page;
    });
    for (const context of contexts) await context.close();
  },
  shell: async ({ page }, use) => {
    await use(new AppShell(page));
  },
  withTenant: async ({ browser }, use) => {
    const operator = await browser.newContext({
      storageState: await storageStateFor(browser, "operator", "acme"),
    });
    const made: string[] = [];
    try {
      await use(async (options) => {
        const tenant = await provisionTenant(operator.request, options);
        made.push(tenant.name);
        return tenant;
      });
    } finally {
      for (const name of made) await removeTenant(operator.request, name);
      await operator.close();
    }
  },
});

export { expect };
