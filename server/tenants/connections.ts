/**
 * Ring0's admin connections to tenant control planes, one per tenant, rebuilt when the access
 * (server, CA, client certificate) changes: the reconciler, the sharing controller, the syncer and
 * the quota webhooks all reach a tenant's control plane through one of these caches.
 */
import { createHash } from "node:crypto";
import { type ClusterConnection, connectCluster } from "@/server/k8s/cluster";
import { type ControlPlaneAccess, kubeconfigFromAccess } from "@/server/provisioners/types";

/** Admin connections to tenant control planes, rebuilt when the access changes. */
export function createConnectionCache() {
  const cache = new Map<string, { fingerprint: string; connection: ClusterConnection }>();
  return {
    connectionFor(tenant: string, access: ControlPlaneAccess): ClusterConnection {
      const fingerprint = createHash("sha256")
        .update(`${access.server}\n${access.ca}\n${access.cert}`)
        .digest("hex");
      const cached = cache.get(tenant);
      if (cached?.fingerprint === fingerprint) return cached.connection;
      const connection = connectCluster(`tenant:${tenant}`, { inline: kubeconfigFromAccess(access, tenant) });
      cache.set(tenant, { fingerprint, connection });
      return connection;
    },
    forget(tenant: string) {
      cache.delete(tenant);
    },
  };
}
