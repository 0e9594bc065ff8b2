/**
 * Issue 7 in the browser, with kubectl through the gateway: an operator gives acme 2 CPU (after a
 * preview), a tenant admin sees it on the quota page, splits it across two namespaces with
 * ResourceQuotas, a pod that would exceed the tenant quota is refused by kubectl with the numbers,
 * and the refusal is explained on the page, linked to the limit it hit.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { kubectlThroughPortal } from "./kubectl";
import { trpcCall } from "./tenant-fixture";

/** The webhook is registered in the tenant's control plane by the reconciler, shortly after the quota is set. */
const enforcing = { timeout: 120_000, intervals: [1_000, 2_000, 5_000] };

const resourceQuota = (namespace: string) => `apiVersion: v1
kind: ResourceQuota
metadata:
  name: share
  namespace: ${namespace}
spec:
  hard:
    requests.cpu: "1"
`;

const pod = (namespace: string, name: string, cpu: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  containers:
    - name: app
      image: nginx
      resources:
        requests:
          cpu: ${cpu}
        limits:
          cpu: ${cpu}
`;

/** kubectl's stderr when it fails, or null when the command succeeded. */
function refusalOf(run: () => string): string | null {
  try {
    run();
    return null;
  } catch (error) {
    const failed = error as { stderr?: string | Buffer; message: string };
    return String(failed.stderr ?? failed.message);
  }
}

async function setAcmeQuotaThroughCard(operator: Page) {
  await operator.goto("/operator/tenants/acme");
  const card = operator.getByRole("region", { name: "Quota", exact: true });
  const form = card.getByRole("form", { name: "Set the quota of acme" });
  await form.getByLabel("requests.cpu").fill("2");
  await form.getByRole("button", { name: "Preview" }).click();
  const preview = card.getByRole("region", { name: "Quota preview" });
  await expect(preview).toBeVisible();
  await expect(preview).toContainText("Nothing would be over");
  await form.getByRole("button", { name: "Apply" }).click();
  await expect(operator.getByRole("status").filter({ hasText: 'Quota of "acme" set.' })).toBeVisible();
  const current = card.getByRole("table", { name: "Current quota" });
  await expect(current.getByRole("row", { name: /requests\.cpu/ })).toContainText("2");
}

test.describe("tenant quotas (issue 7)", () => {
  test.setTimeout(420_000);

  test("an operator gives acme 2 CPU; a tenant admin splits it, a pod over it is refused with the numbers and the page says why", async ({
    loginAs,
  }) => {
    const suffix = Math.random().toString(36).slice(2, 7);
    const [teamA, teamB] = [`quota-a-${suffix}`, `quota-b-${suffix}`];
    const operator = await loginAs("operator");
    const admin = await loginAs("tenant-admin", "acme");
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-quotas-"));
    let kubectl: ((args: string[], input?: string) => string) | null = null;
    try {
      await test.step("the operator previews and applies requests.cpu=2 on acme's page", async () => {
        await setAcmeQuotaThroughCard(operator);
      });

      await test.step("the tenant admin sees 2 CPU on the quota page", async () => {
        await admin.goto("/t/acme/quota");
        const row = admin
          .getByRole("table", { name: "Quota usage" })
          .getByRole("row", { name: /CPU requests/ });
        await expect(row.getByRole("cell").nth(1)).toHaveText("2");
      });

      await test.step("two namespaces with 1 CPU each, through kubectl", async () => {
        await admin.goto("/t/acme");
        kubectl = await kubectlThroughPortal(admin, work);
        const run = kubectl;
        for (const namespace of [teamA, teamB]) {
          run(["create", "namespace", namespace]);
          run(["apply", "-f", "-"], resourceQuota(namespace));
        }
        expect(run(["get", "resourcequota", "share", "-n", teamA, "-o", "jsonpath={.spec.hard}"])).toContain(
          '"requests.cpu":"1"',
        );
        run(["apply", "-f", "-"], pod(teamA, "fits", "1"));
      });

      let message = "";
      await test.step("a pod over the tenant quota is refused with the numbers", async () => {
        const run = kubectl!;
        await expect(async () => {
          const refusal = refusalOf(() =>
            run(["apply", "-f", "-"], pod("default", `over-${suffix}`, "1500m")),
          );
          if (refusal === null) {
            // Admitted before the webhook was registered: take it back and try again.
            run(["delete", "pod", `over-${suffix}`, "-n", "default", "--wait=false"]);
          }
          expect(refusal).toMatch(
            /exceeded tenant quota of "acme": requests\.cpu: requested 1500m, used \S+, limited 2/,
          );
          message = refusal!;
        }).toPass(enforcing);
      });

      await test.step("the refusal is explained on the quota page, linked to its limit", async () => {
        await admin.goto("/t/acme/quota");
        const refusals = admin.getByRole("list", { name: "Quota refusals" });
        const refusal = refusals
          .getByRole("listitem")
          .filter({ hasText: `over-${suffix}` })
          .first();
        await expect(refusal).toContainText(/requested 1500m, used \S+, limited 2/, { timeout: 30_000 });
        expect(message).toContain("requested 1500m");
        await refusal.getByRole("link", { name: "requests.cpu" }).click();
        await expect(admin).toHaveURL(/#limit-requests\.cpu$/);
        await expect(admin.locator('[id="limit-requests.cpu"]')).toHaveAttribute("data-highlighted", "true");
        const namespaces = admin.getByRole("table", { name: "Usage by namespace" });
        await expect(namespaces.getByRole("row", { name: new RegExp(teamA) })).toContainText("1 / 1");
        await expect(namespaces.getByRole("row", { name: new RegExp(teamB) })).toContainText("0 / 1");
      });
    } finally {
      if (kubectl) {
        const run = kubectl as (args: string[]) => string;
        for (const namespace of [teamA, teamB])
          refusalOf(() => run(["delete", "namespace", namespace, "--wait=false"]));
        refusalOf(() =>
          run(["delete", "pod", `over-${suffix}`, "-n", "default", "--ignore-not-found", "--wait=false"]),
        );
      }
      // acme is shared by other specs: leave it without a quota.
      const cleared = await trpcCall(operator.request, "quotas.clear", { tenant: "acme" }, "mutation");
      expect(cleared.status, cleared.message).toBe(200);
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
