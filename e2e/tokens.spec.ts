import { expect, test } from "./fixtures";
import { trpcCall } from "./tenant-fixture";

test.describe("API tokens", () => {
  test("a member creates a token, sees its secret once, and revokes it", async ({ loginAs }) => {
    const page = await loginAs("tenant-member", "acme");
    // Unique per run: the e2e state (and its tokens) outlives a run on a developer's machine.
    const name = `laptop kubectl ${Math.random().toString(36).slice(2, 7)}`;
    await page
      .getByRole("navigation", { name: "Tenant portal" })
      .getByRole("link", { name: "API tokens" })
      .click();
    await page.getByLabel("Token name").fill(name);
    await page.getByLabel("Expires after").selectOption({ label: "7 days" });
    await page.getByRole("button", { name: "Create token" }).click();

    const secret = await page.getByRole("region", { name: "New token" }).getByLabel("Token").inputValue();
    expect(secret).toMatch(/^r0_[0-9A-Za-z]{43}$/);
    const row = page.getByRole("table", { name: "Tokens" }).getByRole("row", { name: new RegExp(name) });
    await expect(row).toContainText("active");
    await expect(row).toContainText(secret.slice(0, 12));

    await page.reload();
    await expect(page.getByText(secret)).toHaveCount(0);
    expect(await page.content()).not.toContain(secret);

    await row.getByRole("button", { name: `Revoke ${name}` }).click();
    await expect(row).toContainText("revoked");
  });

  test("tokens stay inside their tenant", async ({ loginAs }) => {
    const member = await loginAs("tenant-member", "acme");
    // As the page sends them (same origin): a cookie-carrying mutation without one is refused.
    const create = await trpcCall(
      member.request,
      "tokens.create",
      { tenant: "acme", name: "ci", expiresInDays: 1 },
      "mutation",
    );
    expect(create.status).toBe(200);
    const foreign = await trpcCall(
      member.request,
      "tokens.create",
      { tenant: "globex", name: "sneaky", expiresInDays: 1 },
      "mutation",
    );
    expect(foreign.status).toBe(404);
    // The same call from nowhere (no Origin, no Referer) changes nothing: the session alone is not enough.
    const originless = await member.request.post("/api/trpc/tokens.create", {
      data: { json: { tenant: "acme", name: "csrf", expiresInDays: 1 } },
    });
    expect(originless.status()).toBe(403);

    const globexAdmin = await loginAs("tenant-admin", "globex");
    const input = encodeURIComponent(JSON.stringify({ json: { tenant: "acme" } }));
    expect((await globexAdmin.request.get(`/api/trpc/tokens.list?input=${input}`)).status()).toBe(404);

    const acmeAdmin = await loginAs("tenant-admin", "acme");
    await acmeAdmin.goto("/t/acme/tokens");
    await expect(
      acmeAdmin
        .getByRole("table", { name: "Tokens" })
        .getByRole("row", { name: /\bci\b/ })
        .first(),
    ).toContainText("Bob Member");
  });
});
