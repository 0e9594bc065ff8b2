/**
 * Where a tenant's local control plane lives on disk: everything under `<stateDir>/tenants/<tenant>/`
 * (kwokctl's KWOK_WORKDIR for that tenant), so tenant names become paths and must be short DNS
 * labels. Its files are read leniently (a missing file is undefined) and written atomically, so a
 * crash never leaves half a record or config behind.
 */
import fs from "node:fs";
import path from "node:path";
import { ControlPlaneSpecError } from "../types";

const TENANT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Tenant names become paths: refuse anything but a short DNS label. */
export function checkTenantName(tenant: string): string {
  if (tenant.length > 40 || !TENANT_NAME.test(tenant)) {
    throw new ControlPlaneSpecError(
      `"${tenant}" is not a valid tenant name for a local control plane: lowercase letters, digits and "-", at most 40 characters`,
    );
  }
  return tenant;
}

/** The kwokctl cluster name of a tenant. */
export function localClusterName(tenant: string): string {
  return `ring0-${tenant}`;
}

/** The files of one tenant's control plane. */
export interface TenantPaths {
  /** `<stateDir>/tenants/<tenant>`: kwokctl's work dir. */
  dir: string;
  /** `ring0.json`, Ring0's record. */
  record: string;
  /** `kwok.yaml`, the KwokctlConfiguration Ring0 writes. */
  config: string;
  /** The admin kubeconfig kwokctl writes. */
  kubeconfig: string;
  /** `clusters/ring0-<tenant>`: kwokctl's cluster. */
  clusterDir: string;
  /** kwokctl's saved cluster config (what `start` runs). */
  clusterConfig: string;
  /** kwokctl's PKI of the cluster. */
  pki: string;
}

export function tenantPaths(tenantsDir: string, tenant: string): TenantPaths {
  const dir = path.join(tenantsDir, checkTenantName(tenant));
  const clusterDir = path.join(dir, "clusters", localClusterName(tenant));
  return {
    dir,
    record: path.join(dir, "ring0.json"),
    config: path.join(dir, "kwok.yaml"),
    kubeconfig: path.join(dir, "kubeconfig"),
    clusterDir,
    clusterConfig: path.join(clusterDir, "kwok.yaml"),
    pki: path.join(clusterDir, "pki"),
  };
}

/** The tenants with a dir under `tenantsDir`, sorted; names that cannot be tenants are skipped. */
export function listTenantDirs(tenantsDir: string): string[] {
  try {
    return fs
      .readdirSync(tenantsDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name.length <= 40 && TENANT_NAME.test(entry.name))
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}

export function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

export function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}
