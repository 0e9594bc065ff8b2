/**
 * The real kubectl Ring0 built (scripts/kube-build.sh caches it), for specs that use a kubeconfig
 * downloaded through the portal (kubectlThroughPortal). The path is resolved once per run: `--print-dir` hashes the
 * tools tree, which is not free.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { expect, type Page } from "@playwright/test";

let binary: string | undefined;

export function kubectlBinary(): string {
  binary ??= path.join(
    execFileSync("bash", ["scripts/kube-build.sh", "--print-dir"], { encoding: "utf8" })
      .trim()
      .split("\n")
      .at(-1) as string,
    "kubectl",
  );
  return binary;
}

/** The seeded tenants' control planes are provisioned at start; the first test may wait for them. */
export const provisioning = { timeout: 240_000 };

/**
 * kubectl with a kubeconfig downloaded through the portal's form on `page` (a tenant's page with
 * its "Control plane" region), as a tenant admin would; it talks to the tenant through the gateway.
 * `input` goes to kubectl's stdin (`apply -f -`).
 */
export async function kubectlThroughPortal(page: Page, work: string) {
  await expect(page.getByRole("region", { name: "Control plane" })).toContainText(
    /Phase\s*Ready/,
    provisioning,
  );
  const form = page.getByRole("form", { name: "Download kubeconfig" });
  await form.getByLabel("Expires after").selectOption({ label: "1 day" });
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    form.getByRole("button", { name: "Download kubeconfig" }).click(),
  ]);
  const file = path.join(work, "tenant.kubeconfig");
  await download.saveAs(file);
  return (args: string[], input?: string) =>
    execFileSync(kubectlBinary(), ["--kubeconfig", file, ...args], {
      encoding: "utf8",
      env: { ...process.env, HOME: work, KUBECONFIG: file },
      timeout: 60_000,
      ...(input === undefined ? {} : { input }),
    });
}

/** kubectl's stderr when it fails, or null when the command succeeded. */
export function refusalOf(run: () => string): string | null {
  try {
    run();
    return null;
  } catch (error) {
    const failed = error as { stderr?: string | Buffer; message: string };
    return String(failed.stderr ?? failed.message);
  }
}
