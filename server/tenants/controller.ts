/**
 * The tenant controller: the reconciler (reconciler.ts) on the controller framework, fed by the
 * shared Tenant informer. Only spec changes, deletions and new tenants enqueue (status writes —
 * the reconciler's own — do not), every Ready tenant is re-checked periodically, and once per term
 * control planes without a Tenant (a crash between create and status, a tenant deleted while Ring0
 * was down with its finalizer removed by hand) are destroyed.
 */
import { type Controller, createController } from "@/server/controllers/controller";
import { readObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import type { Logger } from "@/server/logger";
import type { Provisioner } from "@/server/provisioners/types";
import type { DetectedFault } from "./observed";
import { createTenantReconciler, type TenantReconcilerOptions } from "./reconciler";
import { type TenantResource, tenantInformer, tenantRef } from "./tenant-resources";
import { startWatchdog } from "./watchdog";

export interface TenantControllerOptions extends Omit<TenantReconcilerOptions, "logger" | "faults"> {
  logger: Logger;
  workers?: number;
  /** The watchdog's probe interval (watchdog.ts). Default 1 s. */
  watchdogIntervalMs?: number;
}

/** What makes a Tenant worth reconciling again: its spec generation, deletion and finalizers. */
export function tenantTrigger(tenant: TenantResource): string {
  return JSON.stringify([
    tenant.metadata.uid,
    tenant.metadata.generation,
    tenant.metadata.deletionTimestamp ?? null,
    tenant.metadata.finalizers ?? [],
  ]);
}

/** Names whose trigger changed between two snapshots (new, changed, or gone). */
export function changedTenants(previous: Map<string, string>, current: TenantResource[]): string[] {
  const changed: string[] = [];
  const seen = new Set<string>();
  for (const tenant of current) {
    const name = tenant.metadata.name;
    seen.add(name);
    if (previous.get(name) !== tenantTrigger(tenant)) changed.push(name);
  }
  for (const name of previous.keys()) if (!seen.has(name)) changed.push(name);
  return changed;
}

async function collectOrphans(
  provisioners: Provisioner[],
  tenants: Set<string>,
  exists: (tenant: string) => Promise<boolean>,
  logger: Logger,
): Promise<void> {
  for (const provisioner of provisioners) {
    let held: string[];
    try {
      held = await provisioner.list();
    } catch (error) {
      logger.warn("listing control planes failed; orphan check skipped", {
        provisioner: provisioner.name,
        error,
      });
      continue;
    }
    for (const tenant of held) {
      // Re-read: a tenant created after the snapshot may already have its control plane.
      if (tenants.has(tenant) || (await exists(tenant).catch(() => true))) continue;
      logger.warn("removing a control plane whose Tenant no longer exists", {
        tenant,
        provisioner: provisioner.name,
      });
      await provisioner
        .destroy(tenant)
        .catch((error) => logger.error("removing an orphaned control plane failed", { tenant, error }));
    }
  }
}

/**
 * Starts the controller for one term of leadership; resolves a stop function that waits for
 * in-flight reconciles.
 */
export function startTenantController(
  superCluster: ClusterConnection,
  options: TenantControllerOptions,
): { controller: Controller; stop(): Promise<void> } {
  const logger = options.logger.child({ component: "tenant-controller" });
  const faults = new Map<string, DetectedFault>();
  const controller = createController({
    name: "tenant",
    // A local create holds a worker for the seconds kwokctl takes; 8 keeps bursts of tenants moving.
    workers: options.workers ?? 8,
    logger,
    reconcile: createTenantReconciler({ ...options, superCluster, logger, faults }),
  });
  const informer = tenantInformer(superCluster);
  let latest: TenantResource[] = [];
  const watchdog = startWatchdog({
    provisioners: options.provisioners,
    defaultProvisioner: options.defaultProvisioner,
    tenants: () => latest,
    onFault: (tenant, fault) => {
      faults.set(tenant, fault);
      controller.enqueue(tenant);
    },
    logger,
    intervalMs: options.watchdogIntervalMs,
  });
  const seen = new Map<string, string>();
  let orphansChecked = false;
  const unsubscribe = informer.subscribe((tenants) => {
    latest = tenants;
    for (const name of changedTenants(seen, tenants)) controller.enqueue(name);
    seen.clear();
    for (const tenant of tenants) seen.set(tenant.metadata.name, tenantTrigger(tenant));
    if (!orphansChecked) {
      orphansChecked = true;
      const provisioners = Object.values(options.provisioners).filter(
        (provisioner): provisioner is Provisioner => provisioner !== undefined,
      );
      const exists = async (name: string) => {
        try {
          await readObject(superCluster, tenantRef(name));
          return true;
        } catch (error) {
          if (isNotFound(error)) return false;
          throw error;
        }
      };
      void collectOrphans(
        provisioners,
        new Set(tenants.map((tenant) => tenant.metadata.name)),
        exists,
        logger,
      );
    }
  });
  controller.start();
  return {
    controller,
    async stop() {
      unsubscribe();
      await watchdog.stop();
      await controller.stop();
    },
  };
}
