/**
 * Issue 8's done-when in the browser and with kubectl: acme's admin grants globex read access to
 * pods and their logs in namespace `shared` on the Sharing page; a globex member finds it under
 * "Shared with me", lists the pods and tails a log in the browser, and with the kubeconfig the page
 * downloads lists the pods and reads the log with kubectl, refused in `default` and for secrets.
 * When acme's admin revokes, the open log stream closes and kubectl is refused within seconds.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { simulatedPodLogFile } from "@/server/cluster/simulated-pods";
import { superNamespace } from "@/server/syncer/naming";
import { expect, test } from "./fixtures";
import { kubectlBinary, kubectlThroughPortal, refusalOf } from "./kubectl";
import { AppShell } from "./pages/app-shell";
import { e2eStateDir } from "./ports";

/** Synced down, scheduled on a kwok node, status synced back up. */
const syncing = { timeout: 90_000 };
/** A stream connects through the gateway and the owner's control plane. */
const streaming = { timeout: 30_000 };
/** Revocation reaches every path within seconds (the grants' watch sweeps every second). */
const revoking = { timeout: 15_000, intervals: [500, 1_000] };

type Kubectl = (args: string[], input?: string) => string;

const criLine = (text: string) => `${new Date().toISOString()} stdout F ${text}\n`;

const namespace = "shared";
const namespaceManifest = `apiVersion: v1
kind: Namespace
metadata:
  name: ${namespace}
`;

test.describe("cross-tenant sharing (issue 8)", () => {
  test.setTimeout(480_000);

  test("acme shares pods and logs in `shared` with globex: a globex member reads them in the browser and with kubectl, nothing else, and loses access within seconds of the revocation", async ({
    loginAs,
  }) => {
    const suffix = Math.random().toString(36).slice(2, 7);
    const pod = `shared-${suffix}`;
    const grant = `globex-read-${suffix}`;
    const marker = `ring0-e2e-${pod}`;
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-sharing-"));
    const admin = await loginAs("tenant-admin", "acme");
    let acme: Kubectl | null = null;
    try {
      acme = await kubectlThroughPortal(admin, work);
      const owner = acme;
      await test.step("acme's admin makes namespace `shared` with a pod in it, with acme's kubectl", async () => {
        owner(["apply", "-f", "-"], namespaceManifest);
        // Pods are admitted once the namespace's default service account exists (made a moment later).
        await expect
          .poll(() => refusalOf(() => owner(["get", "serviceaccount", "default", "-n", namespace])), syncing)
          .toBeNull();
        owner(["run", pod, "--image=nginx", "-n", namespace]);
      });

      await test.step("acme's admin grants globex read of pods and pods/log in `shared` on the Sharing page", async () => {
        await admin.goto("/t/acme/sharing");
        await admin.getByTestId("grant-create").click();
        const form = admin.getByTestId("grant-form");
        await form.getByTestId("grant-name").fill(grant);
        await form.getByTestId("grantee-tenant-0").fill("globex");
        await form.getByTestId("rule-namespaces-0").fill(namespace);
        await form.getByTestId("rule-preset-0").selectOption("read-logs");
        // The preset: get/list/watch pods and get pods/log, both in the namespace named.
        await expect(form.getByTestId("rule-resources-0")).toHaveValue("pods");
        await expect(form.getByTestId("rule-resources-1")).toHaveValue("pods/log");
        await expect(form.getByTestId("rule-namespaces-1")).toHaveValue(namespace);
        await form.getByTestId("grant-purpose").fill(`e2e: globex reads ${pod}`);
        await form.getByTestId("grant-submit").click();
        await expect(admin.getByTestId(`grant-row-${grant}`)).toBeVisible();
        await expect(admin.getByTestId(`grant-row-${grant}`).getByTestId("grant-state")).toHaveAttribute(
          "data-state",
          "Active",
        );
      });

      const member = await loginAs("tenant-member", "globex");
      const card = member.getByTestId("shared-grant-acme");

      await test.step("the globex member sees the grant under Shared with me: acme's display name, purpose, what they can do", async () => {
        await member.getByRole("link", { name: "Shared with me" }).click();
        await expect(member.getByRole("heading", { level: 1, name: "Shared with me" })).toBeVisible();
        await expect(card.getByRole("heading", { level: 2 })).toHaveText("Acme");
        // Other specs may share more of acme with globex: this grant is its own article in acme's card.
        const article = card.getByTestId(`shared-grant-acme-${grant}`);
        await expect(article).toContainText(`e2e: globex reads ${pod}`);
        await expect(article).toContainText(/Expires \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
        await expect(article.getByRole("row", { name: new RegExp(`^${namespace} `) })).toContainText(
          "see its pods, read logs",
        );
        // Nothing of acme beyond its display name: not its endpoint or admins.
        await expect(card).not.toContainText("acme-admin");
        await expect(card).not.toContainText("https://");
      });

      await test.step("lists the pods of `shared`, live", async () => {
        await card.getByTestId(`shared-ns-link-${namespace}`).click();
        await expect(
          member.getByRole("heading", { level: 1, name: `Workloads in ${namespace}` }),
        ).toBeVisible();
        await expect(member.getByTestId(`pod-row-${pod}`)).toContainText("Running", syncing);
      });

      const logsFile = simulatedPodLogFile(e2eStateDir, superNamespace("acme", namespace), pod);
      const logs = member.getByRole("tabpanel", { name: "Logs" });
      const lines = logs.getByTestId("log-lines");

      await test.step("tails the pod's log in the browser; no Shell tab without exec", async () => {
        await member.getByTestId(`pod-row-${pod}`).getByRole("link", { name: pod }).click();
        await expect(member.getByRole("heading", { level: 1, name: `Pod ${pod}` })).toBeVisible();
        await expect(member.getByRole("tab", { name: "Shell" })).toHaveCount(0);
        await expect.poll(() => fs.existsSync(logsFile), syncing).toBe(true);
        await member.getByRole("tab", { name: "Logs" }).click();
        await expect(lines).toContainText("simulated pod", streaming);
        await expect(logs.getByTestId("stream-status")).toHaveText(/Following/);
        fs.appendFileSync(logsFile, criLine(`${marker} apple`));
        await expect(lines).toContainText(`${marker} apple`, streaming);
      });

      let shared: Kubectl | null = null;
      await test.step("kubectl with the downloaded kubeconfig: pods and logs in `shared`, refused in `default` and for secrets", async () => {
        await member.goto("/t/globex/shared");
        const [download] = await Promise.all([
          member.waitForEvent("download"),
          card.getByTestId("shared-kubeconfig-acme").click(),
        ]);
        expect(download.suggestedFilename()).toBe("acme-shared.kubeconfig");
        const file = path.join(work, "acme-shared.kubeconfig");
        await download.saveAs(file);
        expect(fs.readFileSync(file, "utf8")).toContain("/k8s/tenants/acme");
        const home = fs.mkdtempSync(path.join(work, "globex-"));
        shared = (args: string[]) =>
          execFileSync(kubectlBinary(), ["--kubeconfig", file, ...args], {
            encoding: "utf8",
            env: { ...process.env, HOME: home, KUBECONFIG: file },
            timeout: 60_000,
            // Refusals are asserted on, not printed.
            stdio: ["pipe", "pipe", "pipe"],
          });
        const run = shared;
        expect(run(["config", "current-context"]).trim()).toBe("acme-shared");
        expect(run(["get", "pods", "-n", namespace, "-o", "name"])).toContain(`pod/${pod}`);
        expect(run(["logs", pod, "-n", namespace])).toContain(`${marker} apple`);
        expect(refusalOf(() => run(["get", "pods", "-n", "default"]))).toMatch(/forbidden|not found/i);
        expect(refusalOf(() => run(["get", "secrets", "-n", namespace]))).toMatch(/forbidden|not found/i);
        expect(refusalOf(() => run(["delete", "pod", pod, "-n", namespace, "--wait=false"]))).toMatch(
          /forbidden|not found/i,
        );
      });

      await test.step("acme's admin revokes: the open log stream closes and kubectl is refused within seconds", async () => {
        await member.goto(`/t/globex/shared/acme/${namespace}/${pod}`);
        await expect(member.getByRole("heading", { level: 1, name: `Pod ${pod}` })).toBeVisible();
        await member.getByRole("tab", { name: "Logs" }).click();
        await expect(logs.getByTestId("stream-status")).toHaveText(/Following/, streaming);

        await admin.goto("/t/acme/sharing");
        await admin.getByTestId(`grant-revoke-${grant}`).click();
        await admin.getByTestId("grant-revoke-confirm").click();
        await expect(admin.getByTestId(`grant-row-${grant}`).getByTestId("grant-state")).toHaveAttribute(
          "data-state",
          "Revoked",
        );

        await expect(logs.getByTestId("stream-status")).toHaveAttribute("data-phase", "closed", revoking);
        const run = shared as unknown as Kubectl;
        await expect
          .poll(() => refusalOf(() => run(["get", "pods", "-n", namespace])), revoking)
          .toMatch(/forbidden|not found|unauthorized/i);

        // Gone from Shared with me, and its pages are not found.
        await member.goto("/t/globex/shared");
        await expect(member.getByRole("heading", { level: 1, name: "Shared with me" })).toBeVisible();
        await expect(member.getByText(`e2e: globex reads ${pod}`)).toHaveCount(0);
        await member.goto(`/t/globex/shared/acme/${namespace}/${pod}`);
        await new AppShell(member).expectNotFound();
      });
    } finally {
      try {
        (acme as Kubectl | null)?.(["delete", "pod", pod, "-n", namespace, "--wait=false"]);
      } catch {
        // Best effort: the pod goes with the run's state dir anyway.
      }
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
