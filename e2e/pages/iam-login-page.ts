import { expect, type Page } from "@playwright/test";

/** The embedded IAM's login page (a separate origin, as any real IAM would be). */
export class IamLoginPage {
  constructor(readonly page: Page) {}

  async expectVisible() {
    await expect(this.page.getByRole("heading", { name: "Sign in to Ring0" })).toBeVisible();
    await expect(this.page.getByLabel("Username")).toBeVisible();
  }

  async signIn(username: string, password: string) {
    await this.page.getByLabel("Username").fill(username);
    await this.page.getByLabel("Password").fill(password);
    await this.page.getByRole("button", { name: "Sign in" }).click();
  }

  error() {
    return this.page.getByRole("alert");
  }
}
