/**
 * Issue 7 in the browser, with kubectl through the gateway: an operator gives acme 2 CPU (after a
 * preview), a tenant admin sees it on the quota page, splits it across two namespaces with
 * ResourceQuotas, a pod that would exceed the tenant quota is refused by kubectl with the numbers,
 * and the refusal is explained on the page, linked to the limit it hit. A Deployment's pod the quota
 * refuses is held (its ReplicaSet's FailedCreate event says why) until the operator raises the
 * quota, then runs; the history chart shows the raised limit (the e2e server samples every 10 s).
 * Operators' templates: one applied to a tenant cannot be deleted, and the refusal names the tenant.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { kubectlThroughPortal, refusalOf } from "./kubectl";
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

/** A Deployment of one pod requesting `cpu`. */
const deployment = (namespace: string, name: string, cpu: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
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

/** Pods show up through the syncer (kwok runs them in the super cluster). */
const syncing = { timeout: 90_000, intervals: [1_000, 2_000, 5_000] };

async function setAcmeQuotaThroughCard(operator: Page, cpu = "2") {
  await operator.goto("/operator/tenants/acme");
  const card = operator.getByRole("region", { name: "Quota", exact: true });
  const form = card.getByRole("form", { name: "Set the quota of acme" });
  // The form fills itself with the current quota once it has loaded: fill after that, and again
  // if it landed first (a loaded machine once saved "23").
  const field = form.getByLabel("requests.cpu");
  await expect(async () => {
    await field.fill(cpu);
    await expect(field).toHaveValue(cpu, { timeout: 1_000 });
  }).toPass({ timeout: 15_000 });
  await form.getByRole("button", { name: "Preview" }).click();
  const preview = card.getByRole("region", { name: "Quota preview" });
  await expect(preview).toBeVisible();
  await expect(preview).toContainText("Nothing would be over");
  await form.getByRole("button", { name: "Apply" }).click();
  await expect(operator.getByRole("status").filter({ hasText: 'Quota of "acme" set.' })).toBeVisible();
  const current = card.getByRole("table", { name: "Current quota" });
  await expect(
    current
      .getByRole("row", { name: /requests\.cpu/ })
      .getByRole("cell")
      .last(),
  ).toHaveText(cpu);
}

test.describe("tenant quotas (issue 7)", () => {
  test.setTimeout(600_000);

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
        // Pods are admitted once a namespace's default service account exists (made a moment later).
        for (const namespace of [teamA, teamB]) {
          await expect
            .poll(() => refusalOf(() => run(["get", "serviceaccount", "default", "-n", namespace])), {
              timeout: 60_000,
            })
            .toBeNull();
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

      /** The portal's requests.cpu history chart, reloaded until `limit` is its latest sampled limit. */
      const chartShows = async (limit: string) => {
        await admin.goto("/t/acme/quota");
        const chart = admin.getByRole("img", { name: /\(requests\.cpu\) used and limit/ });
        // Samples arrive every 10 s (once this instance holds the Lease); the chart refetches each
        // minute, so reload until the sample is in.
        await expect(async () => {
          await admin.reload();
          await expect(chart).toHaveAttribute("data-limit", limit, { timeout: 2_000 });
        }).toPass({ timeout: 90_000, intervals: [2_000, 5_000] });
        return chart;
      };

      await test.step("the history chart has sampled the 2 CPU limit", async () => {
        await chartShows("2");
      });

      const held = `held-${suffix}`;
      await test.step("a Deployment's pod over the quota is held: its ReplicaSet is refused with the numbers", async () => {
        const run = kubectl!;
        run(["apply", "-f", "-"], deployment("default", held, "1500m"));
        await expect(async () => {
          const events = run([
            "get",
            "events",
            "-n",
            "default",
            "--field-selector",
            "reason=FailedCreate,involvedObject.kind=ReplicaSet",
            "-o",
            'jsonpath={range .items[*]}{.involvedObject.name}{"\\t"}{.message}{"\\n"}{end}',
          ]);
          const ours = events.split("\n").filter((line) => line.startsWith(`${held}-`));
          expect(ours.join("\n")).toMatch(
            /exceeded tenant quota of "acme": requests\.cpu: requested 1500m, used \S+, limited 2/,
          );
        }).toPass(syncing);
        expect(run(["get", "pods", "-n", "default", "-l", `app=${held}`, "-o", "name"]).trim()).toBe("");
      });

      await test.step("the operator raises acme's quota to 3 CPU on its page", async () => {
        await setAcmeQuotaThroughCard(operator, "3");
      });

      await test.step("the held pod is created and runs", async () => {
        const run = kubectl!;
        await expect(async () => {
          const phases = run([
            "get",
            "pods",
            "-n",
            "default",
            "-l",
            `app=${held}`,
            "-o",
            "jsonpath={.items[*].status.phase}",
          ]);
          expect(phases.trim()).toBe("Running");
        }).toPass(syncing);
      });

      await test.step("the history chart shows the raised limit", async () => {
        const chart = await chartShows("3");
        // The limit steps from 2 straight to 3 (samples before this test may show acme without a quota).
        await expect(chart).toHaveAttribute("data-limit-steps", /(^| )2 3$/);
      });
    } finally {
      if (kubectl) {
        const run = kubectl as (args: string[]) => string;
        for (const namespace of [teamA, teamB])
          refusalOf(() => run(["delete", "namespace", namespace, "--wait=false"]));
        refusalOf(() =>
          run(["delete", "pod", `over-${suffix}`, "-n", "default", "--ignore-not-found", "--wait=false"]),
        );
        refusalOf(() =>
          run([
            "delete",
            "deployment",
            `held-${suffix}`,
            "-n",
            "default",
            "--ignore-not-found",
            "--wait=false",
          ]),
        );
      }
      // acme is shared by other specs: leave it without a quota.
      const cleared = await trpcCall(operator.request, "quotas.clear", { tenant: "acme" }, "mutation");
      expect(cleared.status, cleared.message).toBe(200);
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  test("an operator's template applied to a tenant cannot be deleted, and the refusal names the tenant", async ({
    loginAs,
    consoleErrors,
  }) => {
    const name = `e2e-${Math.random().toString(36).slice(2, 7)}`;
    const operator = await loginAs("operator");
    try {
      await test.step("the operator creates a template on the Quotas page", async () => {
        await operator.goto("/operator/quotas");
        await operator.getByText("New template", { exact: true }).click();
        const form = operator.getByRole("form", { name: "New quota template" });
        await form.getByLabel("Name", { exact: true }).fill(name);
        await form.getByLabel("requests.cpu").fill("4");
        await form.getByLabel("pods", { exact: true }).fill("50");
        await form.getByRole("button", { name: "Create template" }).click();
        const row = operator
          .getByRole("table", { name: "Quota templates" })
          .getByRole("row", { name: new RegExp(name) });
        await expect(row).toContainText("requests.cpu=4");
        await expect(row).toContainText("pods=50");
      });

      await test.step("and sets acme's quota from it on acme's page", async () => {
        await operator.goto("/operator/tenants/acme");
        const card = operator.getByRole("region", { name: "Quota", exact: true });
        const form = card.getByRole("form", { name: "Set the quota of acme" });
        await form.getByLabel("Template").selectOption(name);
        await expect(form.getByLabel("requests.cpu")).toHaveValue("4");
        await form.getByRole("button", { name: "Apply" }).click();
        await expect(operator.getByRole("status").filter({ hasText: 'Quota of "acme" set.' })).toBeVisible();
        await expect(card).toContainText(`Copied from template ${name}.`);
        const current = card.getByRole("table", { name: "Current quota" });
        await expect(current.getByRole("row", { name: /pods/ }).getByRole("cell").last()).toHaveText("50");
      });

      await test.step("deleting the template in use is refused, naming acme", async () => {
        await operator.goto("/operator/quotas");
        const table = operator.getByRole("table", { name: "Quota templates" });
        const row = table.getByRole("row", { name: new RegExp(name) });
        await expect(row.getByRole("cell").nth(1)).toHaveText("acme");
        await row.getByRole("button", { name: `Delete template ${name}` }).click();
        const templates = operator.getByRole("region", { name: "Templates" });
        await expect(templates.getByRole("alert")).toContainText(
          `Quota template "${name}" is in use by tenant acme`,
        );
        await operator.reload();
        await expect(row).toBeVisible();
        // The browser logs the refused delete (409) it was asked for; that one is no error of the page.
        const refused =
          /\/operator\/quotas: Failed to load resource: the server responded with a status of 409 \(Conflict\)$/;
        for (let index = consoleErrors.length - 1; index >= 0; index--)
          if (refused.test(consoleErrors[index]!)) consoleErrors.splice(index, 1);
      });

      await test.step("once acme's quota is cleared, the template can be deleted", async () => {
        await operator.goto("/operator/tenants/acme");
        const card = operator.getByRole("region", { name: "Quota", exact: true });
        await card.getByRole("button", { name: "Clear quota" }).click();
        await expect(card).toContainText("No tenant quota");
        await operator.goto("/operator/quotas");
        await operator
          .getByRole("table", { name: "Quota templates" })
          .getByRole("button", { name: `Delete template ${name}` })
          .click();
        await expect(
          operator.getByRole("status").filter({ hasText: `Template "${name}" deleted.` }),
        ).toBeVisible();
        await expect(operator.getByRole("row", { name: new RegExp(name) })).toHaveCount(0);
      });
    } finally {
      // acme is shared by other specs: leave it without a quota, and the template gone.
      const cleared = await trpcCall(operator.request, "quotas.clear", { tenant: "acme" }, "mutation");
      expect(cleared.status, cleared.message).toBe(200);
      await trpcCall(operator.request, "quotas.templates.delete", { name }, "mutation");
    }
  });
});
