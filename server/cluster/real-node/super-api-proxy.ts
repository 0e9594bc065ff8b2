/**
 * The super cluster's API for Ring0's own pods on real nodes (Ring0 installed into the local super
 * cluster by its chart). Pods reach an API server at the `kubernetes` Service; the local super
 * cluster's API server listens on 127.0.0.1 only, advertises POD_API_ADDRESS (so the Service's
 * endpoint is POD_API_ADDRESS:<its port>) and names that address and the Service's cluster IP in
 * its certificate (../super-cluster-config.ts). This listener (./pod-api.ts) admits a connection
 * there only from a pod of Ring0's own Deployment or vn-agent DaemonSet (namespace ring0-system, the
 * chart's labels, Running, not being deleted), looked up by its source address in the super cluster at that
 * moment, and splices it to the API server; anyone else's is closed before a byte passes, so a
 * tenant's pod never reaches the super cluster's API, whatever token it holds. Each request is
 * authenticated by the API server with the pod's own service-account token.
 */
import type { ClusterConnection } from "@/server/k8s/cluster";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import { POD_API_ADDRESS } from "./plan";
import { type PodApiListener, startPodApiListener } from "./pod-api";
import { type PodAtAddress, ring0PodAt } from "./ring0-pods";

/** How long a refused address is refused again without asking the super cluster (a flood's cost). */
const REFUSAL_MEMORY_MS = 2_000;

/**
 * Starts the listener on POD_API_ADDRESS (or `address`) at `apiserverPort`, the port the API server
 * listens on at 127.0.0.1 and advertises. `refusedFrom(ip)` counts the connections from `ip` it
 * closed unadmitted (`refused()` all of them). A refused address is refused again for 2 s without
 * a lookup, so a pod dialling in a loop costs the super cluster one list every 2 s.
 */
export async function startSuperApiProxy(options: {
  superCluster: ClusterConnection;
  apiserverPort: number;
  logger: Logger;
  address?: string;
}): Promise<PodApiListener & { refused(): number; refusedFrom(ip: string): number }> {
  const { superCluster, logger } = options;
  const refusals = new Map<string, number>();
  const refusedUntil = new Map<string, number>();
  const refuse = (ip: string) => {
    refusals.set(ip, (refusals.get(ip) ?? 0) + 1);
    refusedUntil.set(ip, Date.now() + REFUSAL_MEMORY_MS);
    return false;
  };
  const listener = await startPodApiListener({
    owner: "ring0",
    host: options.address ?? POD_API_ADDRESS,
    port: options.apiserverPort,
    upstreamPort: options.apiserverPort,
    logger,
    async isTenantPod(ip) {
      if ((refusedUntil.get(ip) ?? 0) > Date.now()) return refuse(ip);
      refusedUntil.delete(ip);
      const pods = await kubeRequest<{ items: PodAtAddress[] }>(superCluster, {
        path: "/api/v1/pods",
        query: { fieldSelector: `status.podIP=${ip}` },
        timeoutMs: 5_000,
      });
      return ring0PodAt(pods.items, ip) !== undefined || refuse(ip);
    },
  });
  return {
    ...listener,
    refused: () => [...refusals.values()].reduce((sum, count) => sum + count, 0),
    refusedFrom: (ip) => refusals.get(ip) ?? 0,
  };
}
