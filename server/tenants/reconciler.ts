/**
 * The tenant reconciler (Lessor's resolveTenantState, done the controller-runtime way): for one
 * Tenant key, read the object fresh, then walk ordered idempotent steps —
 *
 *   1. deletion: destroy the control plane, run the deletion hook, drop the finalizer;
 *   2. finalizer present (so a delete always cleans up);
 *   3. version resolved against the binaries Ring0 has (unknown → condition, no retry);
 *   4. provisioner.ensure (create / start / stop / upgrade) and observe;
 *   5. tenant defaults applied in the control plane (namespaces, RBAC, protection policy) and the
 *      quota webhook synced;
 *
 * and rebuild status from what this run saw (observed.ts names each outcome, status.ts's pure
 * buildStatus turns it into conditions ControlPlaneReady, DefaultsApplied, Ready; phase; endpoint;
 * version; timings; observedGeneration), with an Event on every phase change. Reading, the
 * finalizer, Events and the status write are the shared custom-resource skeleton
 * (controllers/custom-resource.ts). A crash between any two steps is harmless: the next run
 * starts from the top and every step converges.
 */
import { syncQuotaWebhook } from "@/server/admission/registration";
import {
  NotYetError,
  type ReconcileContext,
  type Result,
  TerminalError,
} from "@/server/controllers/controller";
import {
  type CustomResourceKind,
  type CustomResourceStore,
  clusterCustomResourceStore,
  createCustomResource,
} from "@/server/controllers/custom-resource";
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { Logger } from "@/server/logger";
import {
  type ControlPlaneObservation,
  ControlPlaneSpecError,
  type Provisioner,
} from "@/server/provisioners/types";
import { availableVersions, resolveVersion } from "@/server/provisioners/versions";
import { createConnectionCache } from "./connections";
import { applyTenantDefaults } from "./defaults";
import {
  activeDegradation,
  type DetectedFault,
  defaultsFailed,
  defaultsPending,
  degraded,
  degradedBy,
  deleting,
  isStopped,
  notServing,
  observedTenant,
  provisionerFailed,
  provisionerUnavailable,
  readyAfter,
  servesVersion,
  serving,
  stillDegraded,
  suspended,
  unsupportedVersion,
} from "./observed";
import { buildStatus, conditionOf, type Observed, phaseChangeEvent, type TenantStatus } from "./status";
import {
  type Provisioner as ProvisionerName,
  type TenantResource,
  tenantApiVersion,
  tenantKind,
} from "./tenant-resources";

export const tenantFinalizer = "ring0.dev/control-plane";

/** A fault the watchdog handed over is acted on only this soon after it was found. */
const FAULT_FRESH_MS = 30_000;

/** Tenants as the reconciler reads and writes them (finalizer, Events, status). */
export const tenantResourceKind: CustomResourceKind = {
  apiVersion: tenantApiVersion,
  kind: tenantKind,
  plural: "tenants",
  finalizer: tenantFinalizer,
  component: "ring0-tenant-controller",
};

/**
 * Step 5, in a serving control plane with Ring0's admin connection to it: resolves why the tenant
 * is not set up yet (it is requeued), or undefined once it is; a throw is a failure to retry.
 */
export type ControlPlaneSetup = (
  conn: ClusterConnection,
  tenant: TenantResource,
  provisioner: ProvisionerName,
  context: { signal: AbortSignal; log: Logger },
) => Promise<string | undefined>;

export interface TenantReconcilerOptions {
  superCluster: ClusterConnection;
  provisioners: Partial<Record<ProvisionerName, Provisioner>>;
  defaultProvisioner: ProvisionerName;
  logger: Logger;
  now?: () => Date;
  /** How often a starting control plane is polled. Default 300 ms (a readyz GET; cheap). */
  pollMs?: number;
  /** Periodic drift check of a Ready tenant. Default 60 s. */
  resyncMs?: number;
  /** Runs once per deleted tenant, after its control plane is gone (e.g. revoke its API tokens). */
  onDeleted?: (tenant: string) => Promise<void>;
  /** Where Tenants are read and written. Default: the super cluster (unit tests pass a fake). */
  store?: CustomResourceStore;
  /** Step 5. Default: the tenant defaults, then the quota webhook (setUpTenantControlPlane). */
  setUp?: ControlPlaneSetup;
  /**
   * Faults the watchdog (watchdog.ts) found in serving control planes, by tenant: the next run takes
   * the tenant's out, marks the tenant Degraded and heals it (restarting a component that stopped
   * answering).
   */
  faults?: Map<string, DetectedFault>;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Step 5 as Ring0 runs it: the tenant defaults, then the quota webhook following spec.quota. */
export const setUpTenantControlPlane: ControlPlaneSetup = async (
  conn,
  tenant,
  provisioner,
  { signal, log },
) => {
  const spec = tenant.spec ?? {};
  // The quota webhook is registered even when the defaults fail this time (a tenant object in the
  // way, a slow control plane): a quota must never wait on them. The failure is thrown after.
  let pending: string | undefined;
  let defaultsFailed: { error: unknown } | undefined;
  try {
    pending = await applyTenantDefaults(
      conn,
      { tenant: tenant.metadata.name, admins: spec.admins ?? [] },
      signal,
    );
  } catch (error) {
    defaultsFailed = { error };
  }
  // The quota webhook follows Tenant.spec.quota: registered with a quota, removed without. A local
  // control plane reaches Ring0's webhook on 127.0.0.1, one in pods on the pod API address (the
  // local world with real nodes); where it cannot, none is registered (a Fail policy would refuse
  // every create it covers) and the syncer alone enforces. Both present their client certificate.
  const webhook = await syncQuotaWebhook(conn, spec.quota, { inPods: provisioner === "kubernetes" });
  const hasQuota = !!spec.quota?.hard && Object.keys(spec.quota.hard).length > 0;
  if (provisioner === "kubernetes" && hasQuota && webhook !== "applied") {
    log.info("quota enforced by the syncer only: this control plane in pods cannot reach Ring0's webhook");
  } else if (webhook === "no-endpoint") {
    log.warn(
      "the tenant has a quota but Ring0's admission webhooks are not serving: only the syncer holds pods back",
    );
  }
  if (defaultsFailed) throw defaultsFailed.error;
  return pending;
};

export function createTenantReconciler(options: TenantReconcilerOptions) {
  const now = options.now ?? (() => new Date());
  const pollMs = options.pollMs ?? 300;
  const resyncMs = options.resyncMs ?? 60_000;
  const setUp = options.setUp ?? setUpTenantControlPlane;
  const connections = createConnectionCache();
  const tenants = createCustomResource<TenantResource, TenantStatus>(
    tenantResourceKind,
    options.store ??
      clusterCustomResourceStore(options.superCluster, {
        component: tenantResourceKind.component,
        logger: options.logger,
      }),
  );

  /** Rebuilds the status from what this run observed, with an Event when the phase changed. */
  async function writeStatus(tenant: TenantResource, observed: Observed): Promise<TenantStatus> {
    const { status } = await tenants.writeStatus(tenant.metadata.name, (previous) =>
      buildStatus(previous, observed, now()),
    );
    const change = phaseChangeEvent(tenant.status?.phase, observed, status);
    if (change) await tenants.event(tenant, change.type, change.reason, change.message);
    return status;
  }

  async function tearDown(tenant: TenantResource, provisioner: Provisioner | undefined, log: Logger) {
    const name = tenant.metadata.name;
    if (!tenants.hasFinalizer(tenant)) return;
    if (tenant.status?.phase !== "Deleting") {
      await writeStatus(tenant, deleting(observedTenant(tenant, provisioner?.name ?? "unknown"))).catch(
        (error) => log.debug("status write during deletion failed", { error }),
      );
    }
    // Every provisioner, not just the tenant's: a crash mid-create under another default leaves nothing behind.
    for (const candidate of Object.values(options.provisioners)) {
      if (candidate) await candidate.destroy(name);
    }
    connections.forget(name);
    await options.onDeleted?.(name);
    if (await tenants.removeFinalizer(name)) log.info("tenant deleted: control plane removed");
  }

  return async function reconcile(name: string, context: ReconcileContext): Promise<Result | undefined> {
    const log = context.logger.child({ tenant: name });
    let tenant = await tenants.read(name);
    if (!tenant) {
      connections.forget(name);
      return undefined;
    }
    const spec = tenant.spec ?? {};
    const recorded = tenant.status?.provisioner;
    const providerName = (recorded ??
      spec.controlPlane?.provisioner ??
      options.defaultProvisioner) as ProvisionerName;
    const provisioner = options.provisioners[providerName];

    // 1. Deletion.
    if (tenant.metadata.deletionTimestamp) {
      await tearDown(tenant, provisioner, log);
      return;
    }

    // 2. Finalizer.
    if (!tenants.hasFinalizer(tenant)) {
      await tenants.addFinalizer(tenant);
      throw new NotYetError("finalizer added", 0);
    }

    const common = observedTenant(tenant, providerName);
    if (!provisioner) {
      await writeStatus(tenant, provisionerUnavailable(common, Object.keys(options.provisioners)));
      throw new TerminalError(`provisioner ${providerName} is not enabled`);
    }
    if (recorded && spec.controlPlane?.provisioner && spec.controlPlane.provisioner !== recorded) {
      log.warn("spec.controlPlane.provisioner changed after provisioning; keeping the recorded one", {
        recorded,
        requested: spec.controlPlane.provisioner,
      });
    }

    // 3. Version.
    let version: string;
    try {
      version = resolveVersion(spec.controlPlane?.version ?? availableVersions()[0] ?? "");
    } catch (error) {
      if (!(error instanceof ControlPlaneSpecError)) throw error;
      // The control plane (if any) keeps running at its current version; only the change is refused.
      await writeStatus(tenant, unsupportedVersion(common, await provisioner.observe(name), error.message));
      throw new TerminalError(error.message);
    }

    // 4. The control plane. A fault found in it while it served is shown before it is healed.
    const suspend = spec.suspend === true;
    // Taken once: the Degraded condition carries it from here, and a restart it asks for is done
    // once. A fault that waited too long for a worker is stale: the watchdog reports it again if real.
    const taken = options.faults?.get(name);
    options.faults?.delete(name);
    const fault = taken && now().getTime() - taken.at.getTime() <= FAULT_FRESH_MS ? taken : undefined;
    let degradation = activeDegradation(tenant);
    if (!suspend && !degradation && fault && tenant.status?.phase === "Ready") {
      degradation = degradedBy(fault);
      log.warn("control plane degraded; healing it", {
        component: fault.component,
        fault: fault.message,
        detail: fault.detail,
      });
      tenant = { ...tenant, status: await writeStatus(tenant, degraded(tenant, common, degradation)) };
    }
    let observation: ControlPlaneObservation;
    try {
      // A component that stopped answering is restarted; one that exited is started anyway.
      const restart =
        fault?.kind === "unresponsive" && !suspend && (degradation || tenant.status?.phase === "Ready")
          ? [fault.component]
          : undefined;
      const storage = spec.controlPlane?.storage;
      observation = await provisioner.ensure(
        {
          tenant: name,
          version,
          suspended: suspend,
          ...(restart ? { restart } : {}),
          ...(storage ? { storage } : {}),
        },
        context.signal,
      );
      if (observation.phase === "Starting") observation = await provisioner.observe(name);
    } catch (error) {
      const message = messageOf(error);
      const permanent = error instanceof ControlPlaneSpecError;
      await writeStatus(
        tenant,
        (permanent
          ? undefined
          : stillDegraded(
              tenant,
              common,
              degradation,
              context.failures,
              { phase: "Failed", message },
              now(),
            )) ??
          provisionerFailed(tenant, common, version, { message, permanent, failures: context.failures }),
      );
      if (permanent) throw new TerminalError(message);
      throw error;
    }

    if (suspend) {
      await writeStatus(tenant, suspended(tenant, common, version, observation));
      if (!isStopped(observation)) throw new NotYetError("stopping the control plane", pollMs);
      return { requeueAfterMs: resyncMs };
    }

    if (observation.phase !== "Running" || !servesVersion(observation, version)) {
      await writeStatus(
        tenant,
        stillDegraded(tenant, common, degradation, context.failures, observation, now()) ??
          notServing(tenant, common, version, observation, context.failures),
      );
      if (observation.phase === "Failed") throw new Error(observation.message ?? "the control plane failed");
      throw new NotYetError(`control plane ${observation.phase}`, pollMs);
    }

    // 5. Defaults, with Ring0's admin identity in the tenant's control plane.
    const running = serving(common, observation, version);
    const access = await provisioner.access(name);
    if (!access) throw new NotYetError("control plane access not available yet", pollMs);
    let pending: string | undefined;
    try {
      const conn = connections.connectionFor(name, access);
      pending = await setUp(conn, tenant, providerName, { signal: context.signal, log });
    } catch (error) {
      await writeStatus(
        tenant,
        defaultsFailed(tenant, running, version, { message: messageOf(error), failures: context.failures }),
      );
      throw error;
    }
    if (pending) {
      await writeStatus(tenant, defaultsPending(tenant, running, version, pending));
      throw new NotYetError(pending, pollMs);
    }
    const status = await writeStatus(tenant, readyAfter(tenant, running, now()));
    if (degradation) log.info("control plane healed", { degraded: conditionOf(status, "Degraded")?.message });
    return { requeueAfterMs: resyncMs };
  };
}
