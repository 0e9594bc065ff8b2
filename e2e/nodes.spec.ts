import { localSuperCluster } from "@/server/cluster/local";
import { createLogger } from "@/server/logger";
import { expect, test } from "./fixtures";
import { AppShell } from "./pages/app-shell";
import { e2eStateDir } from "./ports";

const cluster = () => localSuperCluster({ stateDir: e2eStateDir, logger: createLogger({}, "warn") });

test.describe("the super cluster's nodes", () => {
  test("the console shows a real 1.36 super cluster with its nodes", async ({ loginAs }) => {
    const page = await loginAs("operator");
    await expect(page.getByRole("region", { name: "Super cluster version" })).toContainText("v1.36");
    await expect(page.getByRole("region", { name: "Super cluster health" })).toContainText("Healthy");
    await expect(page.getByRole("region", { name: "Node count" })).toContainText("3 / 3");
  });

  test("a node added with kwokctl appears without a reload, and leaves again", async ({ loginAs }) => {
    const page = await loginAs("operator");
    await new AppShell(page).open("Nodes");
    const rows = page.getByRole("table", { name: "Nodes" }).getByRole("row");
    await expect(page.getByRole("status", { name: "Node list: live" })).toBeVisible();
    await expect(rows).toHaveCount(1 + 3);
    await expect(rows.nth(1)).toContainText("Ready");
    await expect(rows.nth(1)).toContainText(/zone-[abc]/);

    await cluster().scaleNodes(4);
    await expect(rows).toHaveCount(1 + 4);
    await cluster().scaleNodes(3);
    await expect(rows).toHaveCount(1 + 3);
  });

  test("a node page shows conditions, labels and its pods", async ({ loginAs }) => {
    const page = await loginAs("operator");
    await new AppShell(page).open("Nodes");
    const first = page.getByRole("table", { name: "Nodes" }).getByRole("row").nth(1).getByRole("link");
    const name = (await first.textContent()) ?? "";
    await first.click();
    await expect(page.getByRole("heading", { level: 1, name: `Node ${name}` })).toBeVisible();
    await expect(
      page.getByRole("table", { name: "Conditions" }).getByRole("row", { name: /Ready/ }),
    ).toBeVisible();
    await expect(page.getByRole("list", { name: "Labels" })).toContainText("topology.kubernetes.io/zone=");
    await expect(page.getByText(/Pods on this node|No pods on this node/).first()).toBeVisible();
  });

  test("tenant users cannot see nodes", async ({ loginAs }) => {
    const page = await loginAs("tenant-admin", "acme");
    await page.goto("/operator/nodes");
    await new AppShell(page).expectNotFound();
    expect((await page.request.get("/api/trpc/nodes.list")).status()).toBe(403);
  });
});
