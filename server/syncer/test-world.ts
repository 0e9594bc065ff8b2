/**
 * Test-only helpers shared by the syncer's integration suites: object refs, tolerant reads, the
 * Tenant objects and local control planes a suite's tenants need, and their cleanup.
 */
import { createObject, deleteObject, type KubeObject, readObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import { eventually } from "@/server/k8s/test-cluster";
import { kubeRequest } from "@/server/k8s/transport";
import type { Provisioner } from "@/server/provisioners/types";
import { availableVersions } from "@/server/provisioners/versions";
import { createConnectionCache } from "@/server/tenants/connections";
import type { ControlPlaneDirectory } from "@/server/tenants/control-planes";
import { tenantApiVersion, tenantKind } from "@/server/tenants/tenant-resources";
import { syncLabels } from "./contracts";

/** A Kubernetes object with the fields the syncer suites look at. */
export interface Obj extends KubeObject {
  spec?: Record<string, unknown> & { nodeName?: string };
  status?: Record<string, unknown> & { phase?: string; podIP?: string; hostIP?: string; reason?: string };
  data?: Record<string, string>;
}

export const ref = (kind: string, name: string, ns?: string, apiVersion = "v1") => ({
  apiVersion,
  kind,
  metadata: { name, ...(ns ? { namespace: ns } : {}) },
});

/** The object, or undefined when it does not exist. */
export async function readOrUndefined<T extends KubeObject = Obj>(
  conn: ClusterConnection,
  target: ReturnType<typeof ref>,
): Promise<T | undefined> {
  try {
    return await readObject<T>(conn, target);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * A directory that answers for `ours` only, with the provisioner's admin access (and `podEndpoint`
 * as the tenants' pods' API address, for worlds whose pods are simulated and reach nothing).
 */
export function provisionerDirectory(
  ours: ReadonlySet<string>,
  provisioner: () => Provisioner | undefined,
  podEndpoint?: { host: string; port: number },
): ControlPlaneDirectory {
  return {
    async lookup(tenant) {
      const current = provisioner();
      if (!ours.has(tenant) || !current) return { state: "absent" };
      const access = await current.access(tenant);
      if (!access) return { state: "unavailable", phase: "Provisioning", message: "" };
      return { state: "ready", access: podEndpoint ? { ...access, podEndpoint } : access };
    },
  };
}

/**
 * Each tenant as the tenant controller makes it: a Tenant object in the super cluster and a running
 * control plane; resolves to an admin connection per tenant, in the order given.
 */
export async function startTenants(
  superCluster: ClusterConnection,
  provisioner: Provisioner,
  tenants: readonly string[],
): Promise<ClusterConnection[]> {
  const version = availableVersions()[0] ?? "";
  for (const tenant of tenants) {
    await createObject(superCluster, { ...ref(tenantKind, tenant, undefined, tenantApiVersion), spec: {} });
  }
  await Promise.all(tenants.map((tenant) => provisioner.ensure({ tenant, version, suspended: false })));
  const connections = createConnectionCache();
  return Promise.all(
    tenants.map((tenant) =>
      eventually(async () => {
        if ((await provisioner.observe(tenant)).phase !== "Running") return undefined;
        const access = await provisioner.access(tenant);
        return access ? connections.connectionFor(tenant, access) : undefined;
      }, 180_000),
    ),
  );
}

/** Removes a tenant's Tenant object, control plane and synced super namespaces; never throws. */
export async function removeTenant(
  superCluster: ClusterConnection,
  provisioner: Provisioner | undefined,
  tenant: string,
): Promise<void> {
  await deleteObject(superCluster, ref(tenantKind, tenant, undefined, tenantApiVersion)).catch(
    () => undefined,
  );
  // Another suite's tenant controller may have put its finalizer on: drop it so nothing sticks.
  await kubeRequest(superCluster, {
    method: "PATCH",
    path: `/apis/${tenantApiVersion}/tenants/${tenant}`,
    contentType: "application/merge-patch+json",
    body: { metadata: { finalizers: null } },
  }).catch(() => undefined);
  await provisioner?.destroy(tenant).catch(() => undefined);
  const namespaces = await kubeRequest<{ items: KubeObject[] }>(superCluster, {
    path: "/api/v1/namespaces",
    query: { labelSelector: `${syncLabels.tenant}=${tenant}` },
    timeoutMs: 15_000,
  }).catch(() => ({ items: [] as KubeObject[] }));
  for (const item of namespaces.items) {
    await deleteObject(superCluster, ref("Namespace", item.metadata.name)).catch(() => undefined);
  }
}
