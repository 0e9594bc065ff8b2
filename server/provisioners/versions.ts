/**
 * The Kubernetes versions Ring0 can run a tenant control plane at: the ones it has binaries for.
 * tools/kube builds one release (its go.mod pins k8s.io/kubernetes); a Tenant names a minor
 * ("1.36") or an exact patch ("1.36.4") of it.
 */
import fs from "node:fs";
import path from "node:path";
import { ControlPlaneSpecError } from "./types";

let cached: string[] | undefined;

/** Exact versions with binaries, newest first ("1.36.4"). */
export function availableVersions(root = process.cwd()): string[] {
  if (cached) return cached;
  const goMod = fs.readFileSync(path.join(root, "tools", "kube", "go.mod"), "utf8");
  const pinned = /^\s*k8s\.io\/kubernetes\s+v(\d+\.\d+\.\d+)\b/m.exec(goMod)?.[1];
  if (!pinned) throw new Error("tools/kube/go.mod does not pin k8s.io/kubernetes");
  cached = [pinned];
  return cached;
}

/**
 * The exact version for a Tenant's `spec.controlPlane.version`: a minor picks its newest patch.
 * Anything without binaries throws ControlPlaneSpecError naming what is available.
 */
export function resolveVersion(requested: string, available = availableVersions()): string {
  const wanted = requested.trim().replace(/^v/, "");
  const match = available.find((version) => version === wanted || version.startsWith(`${wanted}.`));
  if (!/^1\.\d+(\.\d+)?$/.test(wanted) || !match) {
    throw new ControlPlaneSpecError(
      `Kubernetes ${requested} is not available: Ring0 has binaries for ${available.join(", ")}. Set spec.controlPlane.version to one of them (or its minor, e.g. "${available[0]?.split(".").slice(0, 2).join(".")}").`,
    );
  }
  return match;
}
