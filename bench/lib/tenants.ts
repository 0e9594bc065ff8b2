/**
 * Tenants as a bench sets them up, the way the tenant controller would: a Tenant object in the
 * super cluster, a control plane of a provisioner brought to Running (ensured again when it fails),
 * the tenant defaults in force, and the namespace's default service account that pods wait on.
 */
import type { ClusterConnection } from "@/server/k8s/cluster";
import { kubeRequest } from "@/server/k8s/transport";
import type { ControlPlaneAccess, Provisioner } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import { createConnectionCache } from "@/server/tenants/connections";
import { applyTenantDefaults } from "@/server/tenants/defaults";
import { tenantApiVersion } from "@/server/tenants/tenant-resources";
import { sleep, waitFor } from "./run";

/** A Tenant object `{spec: {}}` in the super cluster, as a person creating the tenant would write it. */
export async function createTenantObject(superCluster: ClusterConnection, tenant: string): Promise<void> {
  await kubeRequest(superCluster, {
    method: "POST",
    path: `/apis/${tenantApiVersion}/tenants`,
    body: { apiVersion: tenantApiVersion, kind: "Tenant", metadata: { name: tenant }, spec: {} },
  });
}

/** Pods are refused until the namespace's default service account exists: wait for it. */
export function defaultServiceAccount(conn: ClusterConnection, namespace: string): Promise<void> {
  return waitFor(
    `the default service account in ${namespace}`,
    async () => {
      await kubeRequest(conn, { path: `/api/v1/namespaces/${namespace}/serviceaccounts/default` });
      return true;
    },
    { timeoutMs: 120_000, everyMs: 500 },
  );
}

/**
 * Wait until `tenant`'s control plane (ensured already) is Running and resolve with its access.
 * A control plane that fails meanwhile is ensured again, as the tenant reconciler does (a
 * component can lose its port to another process while ten start at once). A timeout names the
 * last phase and message seen.
 */
export async function controlPlaneRunning(
  provisioner: Provisioner,
  tenant: string,
  version: string,
  options: { timeoutMs: number; everyMs: number; check?: () => void; log?: (line: string) => void },
): Promise<ControlPlaneAccess> {
  const deadline = Date.now() + options.timeoutMs;
  let last = "not observed yet";
  let ensureError = "";
  for (let ensured = 0; ; ) {
    options.check?.();
    const observed = await provisioner.observe(tenant).catch((error: unknown) => ({
      phase: "Unknown",
      message: error instanceof Error ? error.message : String(error),
    }));
    last = `${observed.phase}${observed.message ? `: ${observed.message}` : ""}`;
    if (observed.phase === "Running") {
      const access = await provisioner.access(tenant);
      if (access) return access;
    } else if (observed.phase === "Failed" && ensured < 3) {
      ensured++;
      options.log?.(`${tenant}'s control plane failed (${last}); ensuring it again`);
      await provisioner.ensure({ tenant, version, suspended: false }).catch((error: unknown) => {
        ensureError = `; ensuring it again failed: ${error instanceof Error ? error.message : String(error)}`;
      });
    }
    if (Date.now() > deadline)
      throw new Error(`${tenant}'s control plane running: timed out (last seen: ${last}${ensureError})`);
    await sleep(options.everyMs);
  }
}

/**
 * One tenant control plane of `provisioner`, serving with the tenant defaults in force: resolves
 * with its admin access and a connection. `check` runs on every poll (e.g. to stop when the run is
 * being stopped).
 */
export async function startBenchTenant(
  provisioner: Provisioner,
  tenant: string,
  options: { timeoutMs?: number; check?: () => void } = {},
): Promise<{ access: ControlPlaneAccess; conn: ClusterConnection }> {
  const version = availableVersions()[0] as string;
  await provisioner.ensure({ tenant, version, suspended: false });
  const served = await controlPlaneRunning(provisioner, tenant, version, {
    timeoutMs: options.timeoutMs ?? 240_000,
    everyMs: 250,
    check: options.check,
  });
  const conn = createConnectionCache().connectionFor(tenant, served);
  await waitFor(
    "tenant defaults effective",
    async () => (await applyTenantDefaults(conn, { tenant, admins: [] })) === undefined,
    { timeoutMs: 120_000, everyMs: 500 },
  );
  return { access: served, conn };
}
