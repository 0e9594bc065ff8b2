/** Small pieces the suites share to act on a Tenant and its control plane the way people do. */
import type { ClusterConnection } from "@/server/k8s/cluster";
import { kubeRequest } from "@/server/k8s/transport";
import { tenantApiVersion } from "@/server/tenants/tenant-resources";

/** Sets (or with null clears) a Tenant's quota on the super cluster, as an operator's edit does. */
export async function setTenantQuota(
  superCluster: ClusterConnection,
  tenant: string,
  hard: Record<string, string> | null,
): Promise<void> {
  await kubeRequest(superCluster, {
    method: "PATCH",
    path: `/apis/${tenantApiVersion}/tenants/${tenant}`,
    contentType: "application/merge-patch+json",
    body: { spec: { quota: hard ? { hard } : null } },
  });
}

/** `kubectl run` arguments for a pod that sleeps an hour in `image`. */
export function sleeperArgs(name: string, image: string): string[] {
  return ["run", name, `--image=${image}`, "--restart=Never", "--command", "--", "sleep", "3600"];
}
