import { expect, type Page } from "@playwright/test";

/** Ring0's console/portal frame: header, navigation, theme, sign-out. */
export class AppShell {
  constructor(readonly page: Page) {}

  /** The live dot turns on only once the page is hydrated and its SSE feed is connected. */
  async waitUntilLive() {
    await expect(this.page.getByRole("status", { name: "Server connection: Live" })).toBeVisible();
  }

  whoami() {
    return this.page.getByRole("region", { name: "Signed in as" });
  }

  nav(name: "Operator console" | "Tenant portal") {
    return this.page.getByRole("navigation", { name });
  }

  async open(link: string) {
    await this.waitUntilLive();
    await this.page.getByRole("navigation").getByRole("link", { name: link }).click();
  }

  heading(name: string | RegExp) {
    return this.page.getByRole("heading", { level: 1, name });
  }

  async setTheme(theme: "Light theme" | "Dark theme" | "System theme") {
    await this.waitUntilLive();
    await this.page.getByRole("combobox", { name: "Theme" }).selectOption({ label: theme });
  }

  async signOut() {
    await this.waitUntilLive();
    await this.page.getByRole("button", { name: "Sign out" }).click();
    await expect(this.page.getByRole("heading", { name: "You have signed out" })).toBeVisible();
  }

  async expectNotFound() {
    await expect(this.page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  }
}
