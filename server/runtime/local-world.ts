/**
 * Tearing down the local world: every local tenant control plane (processes, ports, files), then
 * the local super cluster. Used by `npm run cluster:down` and the e2e teardown, so nothing Ring0
 * started keeps running. Tenant control planes outlive Ring0 itself on purpose (adopted on restart).
 */
import { localSuperCluster } from "@/server/cluster/local";
import { clearTearingDown, markTearingDown } from "@/server/cluster/teardown";
import type { Logger } from "@/server/logger";
import { createLocalProvisioner } from "@/server/provisioners/local";

export async function removeLocalWorld(stateDir: string, logger: Logger): Promise<{ tenants: string[] }> {
  // A Ring0 still running must not start again what goes away here.
  markTearingDown(stateDir);
  try {
    const provisioner = createLocalProvisioner({ stateDir, logger });
    const tenants = await provisioner.list();
    for (const tenant of tenants) await provisioner.destroy(tenant);
    await localSuperCluster({ stateDir, logger }).down();
    return { tenants };
  } finally {
    clearTearingDown(stateDir);
  }
}
