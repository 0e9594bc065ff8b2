import { expect, type Page } from "@playwright/test";

/** The operator console's page of one tenant (/operator/tenants/<name>). */
export class TenantPage {
  constructor(
    readonly page: Page,
    readonly name: string,
  ) {}

  async open() {
    await this.page.goto(`/operator/tenants/${this.name}`);
  }

  summary() {
    return this.page.getByRole("region", { name: "Summary" });
  }

  /** The phase badge in the summary. */
  phase() {
    return this.summary().locator("dt:text-is('Phase') + dd");
  }

  async expectPhase(phase: string, timeout?: number) {
    await expect(this.phase()).toContainText(phase, timeout ? { timeout } : undefined);
  }

  timeline() {
    return this.page.getByRole("list", { name: "Provisioning timeline" });
  }

  conditions() {
    return this.page.getByRole("region", { name: "Conditions" });
  }

  events() {
    return this.page.getByRole("region", { name: "Events" });
  }

  live() {
    return this.page.getByRole("status", { name: "Tenant: live" });
  }

  /** Suspend or resume through the confirmation the page asks for. */
  async setSuspended(suspend: boolean) {
    const verb = suspend ? "Suspend" : "Resume";
    await this.page.getByRole("button", { name: `${verb}…` }).click();
    const confirm = this.page.getByRole("form", { name: `${verb} tenant ${this.name}` });
    await confirm.getByRole("button", { name: `${verb} ${this.name}` }).click();
    await expect(confirm).toHaveCount(0);
  }

  upgradeForm() {
    return this.page.getByRole("form", { name: `Upgrade tenant ${this.name}` });
  }

  breakGlassForm() {
    return this.page.getByRole("form", { name: "Break-glass admin kubeconfig" });
  }

  /** Deletes with the typed name; the console goes back to the tenant list. */
  async delete() {
    await this.page.getByRole("button", { name: `Delete ${this.name}…` }).click();
    const confirm = this.page.getByRole("form", { name: `Delete tenant ${this.name}` });
    await confirm.getByLabel("Type the tenant's name to confirm").fill(this.name);
    await confirm.getByRole("button", { name: `Delete ${this.name}` }).click();
    await expect(this.page).toHaveURL(/\/operator\/tenants$/);
  }
}
