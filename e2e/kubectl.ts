/**
 * The real kubectl Ring0 built (scripts/kube-build.sh caches it), for specs that use a kubeconfig
 * downloaded through the portal. The path is resolved once per run: `--print-dir` hashes the
 * tools tree, which is not free.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";

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
