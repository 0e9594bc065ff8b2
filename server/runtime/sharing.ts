/**
 * Cross-tenant sharing at run time (issue 8): on every replica the SharingPolicy informer stays
 * subscribed from start, so the gateway's, tRPC's and the streams' grant checks answer from a warm
 * cache instead of waiting for a first list; on the Lease holder only, the sharing controller
 * turns live grants into RBAC in the owners' control planes (server/sharing/controller.ts).
 */
import { createLeaderElector } from "@/server/controllers/leader";
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { Logger } from "@/server/logger";
import { startSharingController } from "@/server/sharing/controller";
import { sharingInformer } from "@/server/sharing/live";
import { controllersNamespace } from "./tenants";

/** Its own Lease: the sharing controller's term is independent of the tenant controller's. */
export const sharingLeaseName = "ring0-sharing-controller";

export function startSharing(
  superCluster: ClusterConnection | null,
  log: Logger,
): { stepDown(): Promise<void>; stop(): Promise<void> } {
  if (!superCluster) return { stepDown: async () => {}, stop: async () => {} };
  // sharingInformer() reads the runtime's super cluster, the one passed here.
  const release = sharingInformer().subscribe(() => {});
  const elector = createLeaderElector(superCluster, {
    namespace: controllersNamespace,
    name: sharingLeaseName,
    logger: log.child({ component: "leader" }),
    async onStartedLeading(signal) {
      log.info("leading: starting the sharing controller");
      // The owners' control planes come from the runtime's directory (server/runtime/tenants.ts).
      const running = startSharingController(superCluster, { logger: log });
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      await running.stop();
    },
  });
  elector.start();
  return {
    stepDown: () => elector.stop(),
    async stop() {
      await elector.stop();
      release();
    },
  };
}
