import { expect, test } from "./fixtures";
import { AppShell } from "./pages/app-shell";

test.describe("tenant isolation", () => {
  test("a tenant member cannot open another tenant's portal", async ({ loginAs }) => {
    const page = await loginAs("tenant-member", "acme");
    const shell = new AppShell(page);
    await page.goto("/t/globex");
    await shell.expectNotFound();
    await expect(page.getByText("globex-admin")).toHaveCount(0);
    await page.goto("/t/globex/members");
    await shell.expectNotFound();
  });

  test("a tenant user cannot open the operator console", async ({ loginAs }) => {
    const page = await loginAs("tenant-admin", "acme");
    await page.goto("/operator");
    await new AppShell(page).expectNotFound();
    await page.goto("/operator/audit");
    await new AppShell(page).expectNotFound();
  });

  test("tRPC refuses another tenant and operator procedures", async ({ loginAs }) => {
    const page = await loginAs("tenant-admin", "acme");
    const input = encodeURIComponent(JSON.stringify({ json: { tenant: "globex" } }));
    const overview = await page.request.get(`/api/trpc/tenants.overview?input=${input}`);
    expect(overview.status()).toBe(404);
    expect(JSON.stringify(await overview.json())).not.toContain("memberCount");
    const members = await page.request.get(`/api/trpc/tenants.members?input=${input}`);
    expect(members.status()).toBe(404);
    const list = await page.request.get("/api/trpc/tenants.list");
    expect(list.status()).toBe(403);
    const audit = await page.request.get(`/api/trpc/audit.list?input=${input}`);
    expect(audit.status()).toBe(404);
  });

  test("invalid input is refused naming the field", async ({ loginAs }) => {
    const page = await loginAs("tenant-admin", "acme");
    const input = encodeURIComponent(JSON.stringify({ json: { tenant: "Not A Tenant" } }));
    const response = await page.request.get(`/api/trpc/tenants.overview?input=${input}`);
    expect(response.status()).toBe(400);
    const body = await response.json();
    expect(body.error.json.message).toContain("tenant:");
    expect(body.error.json.data.code).toBe("BAD_REQUEST");
  });

  test("signed-out requests are refused", async ({ request }) => {
    const response = await request.get("/api/trpc/me.get");
    expect(response.status()).toBe(401);
  });
});
