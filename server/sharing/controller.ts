/**
 * The SharingPolicy controller (reconciler.ts does the work for one grant): fed by the shared
 * SharingPolicy informer, it enqueues a grant only when what decides its RBAC changed (spec,
 * approval, revocation, deletion, finalizers), and the orphan sweep when a grant moved to another
 * owner. It runs for one term of leadership.
 */
import { type Controller, createController } from "@/server/controllers/controller";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { sharedInformer } from "@/server/k8s/informers";
import { createSharingReconciler, orphanSweepKey, type SharingControllerOptions } from "./reconciler";
import { type SharingPolicyResource, sharingAnnotations, sharingPath } from "./types";

/** What makes a grant worth reconciling again: spec, approval and revocation, deletion, finalizers. */
export function sharingTrigger(grant: SharingPolicyResource): string {
  const annotations = grant.metadata.annotations ?? {};
  return JSON.stringify([
    grant.metadata.uid,
    grant.metadata.generation,
    grant.metadata.deletionTimestamp ?? null,
    grant.metadata.finalizers ?? [],
    Object.values(sharingAnnotations).map((key) => annotations[key] ?? null),
  ]);
}

/** Names whose trigger changed between two snapshots (new, changed, or gone). */
export function changedGrants(previous: Map<string, string>, current: SharingPolicyResource[]): string[] {
  const changed: string[] = [];
  const seen = new Set<string>();
  for (const grant of current) {
    seen.add(grant.metadata.name);
    if (previous.get(grant.metadata.name) !== sharingTrigger(grant)) changed.push(grant.metadata.name);
  }
  for (const name of previous.keys()) if (!seen.has(name)) changed.push(name);
  return changed;
}

/**
 * Starts the controller for one term of leadership, fed by the shared SharingPolicy informer; the
 * stop function waits for in-flight reconciles. Status writes (its own, and the gateway's
 * lastUsedAt) do not enqueue: only spec, approval, revocation, deletion and finalizer changes do.
 */
export function startSharingController(
  superCluster: ClusterConnection,
  options: SharingControllerOptions,
): { controller: Controller; stop(): Promise<void> } {
  const logger = options.logger.child({ component: "sharing-controller" });
  const controller = createController({
    name: "sharing",
    workers: options.workers ?? 4,
    logger,
    reconcile: createSharingReconciler(superCluster, { ...options, logger }),
  });
  const informer = sharedInformer<SharingPolicyResource>(superCluster, {
    path: sharingPath,
    ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
  });
  const seen = new Map<string, string>();
  const owners = new Map<string, string>();
  const unsubscribe = informer.subscribe((grants) => {
    for (const name of changedGrants(seen, grants)) controller.enqueue(name);
    // A grant moved to another owner leaves its objects in the old owner's control plane.
    if (
      grants.some(
        (grant) =>
          owners.get(grant.metadata.name) !== undefined &&
          owners.get(grant.metadata.name) !== grant.spec.ownerTenant,
      )
    ) {
      controller.enqueue(orphanSweepKey);
    }
    seen.clear();
    owners.clear();
    for (const grant of grants) {
      seen.set(grant.metadata.name, sharingTrigger(grant));
      owners.set(grant.metadata.name, grant.spec.ownerTenant);
    }
  });
  controller.start();
  controller.enqueue(orphanSweepKey);
  return {
    controller,
    async stop() {
      unsubscribe();
      await controller.stop();
    },
  };
}
