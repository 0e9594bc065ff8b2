import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "./fixtures";
import { kubectlBinary, kubectlThroughPortal } from "./kubectl";
import { AppShell } from "./pages/app-shell";
import { e2eStateDir } from "./ports";

/** Synced down (or refused), scheduled on a kwok node, status synced back up. */
const syncing = { timeout: 90_000 };

/** The e2e instance's local super cluster, as its operator's tooling sees it. */
function superClusterPodsNamed(name: string): string[] {
  const output = execFileSync(
    kubectlBinary(),
    [
      "--kubeconfig",
      path.join(e2eStateDir, "super-cluster.kubeconfig"),
      "get",
      "pods",
      "--all-namespaces",
      "--field-selector",
      `metadata.name=${name}`,
      "-o",
      'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\\n"}{end}',
    ],
    { encoding: "utf8", timeout: 60_000 },
  );
  return output.split("\n").filter(Boolean);
}

const pod = (name: string, privileged: boolean) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default" },
  spec: {
    containers: [
      { name: "app", image: "nginx", ...(privileged ? { securityContext: { privileged: true } } : {}) },
    ],
  },
});

test.describe("the isolation filter, as a tenant admin meets it", () => {
  test.setTimeout(360_000);

  test("a privileged pod is refused: Workloads and the pod page say why, and it never reaches the super cluster", async ({
    loginAs,
  }) => {
    const suffix = Math.random().toString(36).slice(2, 8);
    const refused = `priv-${suffix}`;
    const allowed = `plain-${suffix}`;
    const page = await loginAs("tenant-admin", "acme");
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-isolation-"));
    let kubectl: ((args: string[], input?: string) => string) | null = null;
    try {
      kubectl = await kubectlThroughPortal(page, work);
      // The control plane accepts both; only the syncer tells them apart. The plain pod shows the
      // super cluster check below can see acme's pods at all.
      kubectl(
        ["apply", "-f", "-"],
        JSON.stringify({ apiVersion: "v1", kind: "List", items: [pod(refused, true), pod(allowed, false)] }),
      );

      await new AppShell(page).open("Workloads");
      await expect(page.getByRole("status", { name: "Pods: live" })).toBeVisible();
      const pods = page.getByRole("table", { name: "Pods" });
      await expect(pods.getByRole("row", { name: new RegExp(allowed) })).toContainText("Running", syncing);
      const row = pods.getByRole("row", { name: new RegExp(refused) });
      await expect(row).toContainText("Refused", syncing);
      // The reason is on the row itself, not only on hover: the rule and what to remove.
      await expect(row).toContainText(`Refused by privileged: Container "app" asks for privileged mode`);
      await expect(row).toContainText("remove securityContext.privileged");

      await row.getByRole("link", { name: refused }).click();
      await expect(page.getByRole("heading", { level: 1, name: `Pod ${refused}` })).toBeVisible();
      const alert = page.getByRole("alert", { name: "Refused by the isolation filter" });
      await expect(alert).toContainText("Ring0 will not run this pod on the shared nodes.");
      await expect(alert).toContainText("Refused by privileged");
      await expect(
        page.getByRole("table", { name: "Conditions" }).getByRole("row", { name: /ring0\.dev\/Isolation/ }),
      ).toContainText("IsolationViolation");
      await expect(
        page.getByRole("table", { name: "Events" }).getByRole("row", { name: /IsolationViolation/ }),
      ).toContainText("Ring0 will not run this pod on shared nodes: Refused by privileged");

      expect(superClusterPodsNamed(allowed)).toHaveLength(1);
      expect(superClusterPodsNamed(refused)).toEqual([]);
    } finally {
      try {
        kubectl?.(["delete", "pod", refused, allowed, "-n", "default", "--wait=false"]);
      } catch {
        // Best effort: the pods go with the run's state dir anyway.
      }
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
