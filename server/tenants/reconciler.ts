/**
 * The tenant reconciler (Lessor's resolveTenantState, done the controller-runtime way): for one
 * Tenant key, read the object fresh, then walk ordered idempotent steps —
 *
 *   1. deletion: destroy the control plane, run the deletion hook, drop the finalizer;
 *   2. finalizer present (so a delete always cleans up);
 *   3. version resolved against the binaries Ring0 has (unknown → condition, no retry);
 *   4. provisioner.ensure (create / start / stop / upgrade) and observe;
 *   5. tenant defaults applied in the control plane (namespaces, RBAC, protection policy);
 *
 * and rebuild status from what this run saw (conditions ControlPlaneReady, DefaultsApplied, Ready;
 * phase; endpoint; version; timings; observedGeneration), with an Event on every phase change. A
 * crash between any two steps is harmless: the next run starts from the top and every step
 * converges.
 */
import { createHash } from "node:crypto";
import { syncQuotaWebhook } from "@/server/admission/registration";
import {
  NotYetError,
  type ReconcileContext,
  type Result,
  TerminalError,
} from "@/server/controllers/controller";
import { updateStatusWithRetry } from "@/server/controllers/status";
import { type ClusterConnection, connectCluster } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import { recordEvent } from "@/server/k8s/events";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import {
  type ControlPlaneAccess,
  type ControlPlaneObservation,
  ControlPlaneSpecError,
  kubeconfigFromAccess,
  type Provisioner,
} from "@/server/provisioners/types";
import { availableVersions, resolveVersion } from "@/server/provisioners/versions";
import { applyTenantDefaults } from "./defaults";
import { buildStatus, type Observed, type TenantPhase, type TenantStatus } from "./status";
import {
  type Provisioner as ProvisionerName,
  type TenantResource,
  tenantApiVersion,
  tenantKind,
} from "./tenant-resources";

export const tenantFinalizer = "ring0.dev/control-plane";

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
}

const statusRef = (name: string) => ({ apiVersion: tenantApiVersion, resource: "tenants", name });
const tenantPath = (name: string) => `/apis/${tenantApiVersion}/tenants/${encodeURIComponent(name)}`;

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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function createTenantReconciler(options: TenantReconcilerOptions) {
  const { superCluster } = options;
  const now = options.now ?? (() => new Date());
  const pollMs = options.pollMs ?? 300;
  const resyncMs = options.resyncMs ?? 60_000;
  const connections = createConnectionCache();

  async function read(name: string): Promise<TenantResource | null> {
    try {
      return await kubeRequest<TenantResource>(superCluster, { path: tenantPath(name), timeoutMs: 15_000 });
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /** Merge patch guarded by resourceVersion: a concurrent change is a 409 and a retry. */
  async function setFinalizers(tenant: TenantResource, finalizers: string[]): Promise<void> {
    await kubeRequest(superCluster, {
      method: "PATCH",
      path: tenantPath(tenant.metadata.name),
      contentType: "application/merge-patch+json",
      body: { metadata: { finalizers, resourceVersion: tenant.metadata.resourceVersion } },
      timeoutMs: 15_000,
    });
  }

  const event = (tenant: TenantResource, type: "Normal" | "Warning", reason: string, message: string) =>
    recordEvent(
      superCluster,
      {
        apiVersion: tenantApiVersion,
        kind: tenantKind,
        name: tenant.metadata.name,
        uid: tenant.metadata.uid,
      },
      { type, reason, message },
      { component: "ring0-tenant-controller", logger: options.logger },
    );

  async function writeStatus(tenant: TenantResource, observed: Observed): Promise<TenantStatus> {
    const previousPhase = tenant.status?.phase;
    const written = await updateStatusWithRetry<TenantStatus>(
      superCluster,
      statusRef(tenant.metadata.name),
      (status) => buildStatus(status, observed, now()),
    );
    const status = (written as { status?: TenantStatus }).status ?? {};
    if (previousPhase !== observed.phase) {
      await event(
        tenant,
        observed.phase === "Failed" ? "Warning" : "Normal",
        observed.phase,
        phaseMessage(observed, status),
      );
    }
    return status;
  }

  function phaseMessage(observed: Observed, status: TenantStatus): string {
    if (observed.phase === "Ready") {
      const created = status.timings?.createdAt ? Date.parse(status.timings.createdAt) : Number.NaN;
      const ready = status.timings?.lastReadyAt ? Date.parse(status.timings.lastReadyAt) : Number.NaN;
      const took =
        Number.isFinite(created) &&
        Number.isFinite(ready) &&
        status.timings?.readyAt === status.timings?.lastReadyAt
          ? ` ${((ready - created) / 1000).toFixed(1)} s after creation`
          : "";
      return `The control plane serves${observed.version ? ` Kubernetes ${observed.version}` : ""} and its defaults are applied${took}.`;
    }
    if (observed.phase === "Provisioning") {
      return `Provisioning a dedicated control plane (${observed.provisioner} provisioner).`;
    }
    if (observed.phase === "Failed" || observed.phase === "Upgrading") {
      return observed.controlPlane.status === "True"
        ? observed.defaults.message
        : observed.controlPlane.message;
    }
    return observed.controlPlane.message;
  }

  function base(
    tenant: TenantResource,
    provisioner: string,
  ): Pick<Observed, "generation" | "provisioner" | "createdAt"> {
    const created = tenant.metadata.creationTimestamp;
    return {
      generation: tenant.metadata.generation,
      provisioner,
      createdAt: created ? new Date(created).toISOString() : undefined,
    };
  }

  const waitingForControlPlane = {
    status: "False" as const,
    reason: "WaitingForControlPlane",
    message: "Defaults are applied once the control plane serves.",
  };

  async function tearDown(tenant: TenantResource, provisioner: Provisioner | undefined, log: Logger) {
    const name = tenant.metadata.name;
    if (!tenant.metadata.finalizers?.includes(tenantFinalizer)) return;
    if (tenant.status?.phase !== "Deleting") {
      await writeStatus(tenant, {
        ...base(tenant, provisioner?.name ?? "unknown"),
        phase: "Deleting",
        controlPlane: {
          status: "False",
          reason: "Deleting",
          message: "The control plane and all its data are being removed.",
        },
        defaults: { status: "False", reason: "Deleting", message: "The tenant is being deleted." },
      }).catch((error) => log.debug("status write during deletion failed", { error }));
    }
    // Every provisioner, not just the tenant's: a crash mid-create under another default leaves nothing behind.
    for (const candidate of Object.values(options.provisioners)) {
      if (candidate) await candidate.destroy(name);
    }
    connections.forget(name);
    await options.onDeleted?.(name);
    const fresh = await read(name);
    if (!fresh) return;
    await setFinalizers(
      fresh,
      (fresh.metadata.finalizers ?? []).filter((finalizer) => finalizer !== tenantFinalizer),
    );
    log.info("tenant deleted: control plane removed");
  }

  return async function reconcile(name: string, context: ReconcileContext): Promise<Result | undefined> {
    const log = context.logger.child({ tenant: name });
    const tenant = await read(name);
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
    if (!tenant.metadata.finalizers?.includes(tenantFinalizer)) {
      await setFinalizers(tenant, [...(tenant.metadata.finalizers ?? []), tenantFinalizer]);
      throw new NotYetError("finalizer added", 0);
    }

    const common = base(tenant, providerName);
    if (!provisioner) {
      await writeStatus(tenant, {
        ...common,
        phase: "Failed",
        controlPlane: {
          status: "False",
          reason: "ProvisionerUnavailable",
          message: `The "${providerName}" provisioner is not enabled on this Ring0 (enabled: ${Object.keys(options.provisioners).join(", ")}).`,
        },
        defaults: waitingForControlPlane,
      });
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
      const current = await provisioner.observe(name);
      await writeStatus(tenant, {
        ...common,
        phase: "Failed",
        controlPlane:
          current.phase === "Running"
            ? {
                status: "True",
                reason: "Running",
                message: `Still serving ${current.version ?? "its current version"}.`,
              }
            : { status: "False", reason: "UnsupportedVersion", message: error.message },
        defaults:
          current.phase === "Running"
            ? { status: "True", reason: "Applied", message: "Defaults are applied." }
            : waitingForControlPlane,
        endpoint: current.endpoint,
        version: current.version,
        // Ready names the version problem even when the control plane still serves.
        blocked: { reason: "UnsupportedVersion", message: error.message },
      });
      throw new TerminalError(error.message);
    }

    // 4. The control plane.
    const suspended = spec.suspend === true;
    let observation: ControlPlaneObservation;
    try {
      observation = await provisioner.ensure({ tenant: name, version, suspended }, context.signal);
      if (observation.phase === "Starting") observation = await provisioner.observe(name);
    } catch (error) {
      const message = messageOf(error);
      const permanent = error instanceof ControlPlaneSpecError;
      await writeStatus(tenant, {
        ...common,
        phase: permanent || context.failures >= 2 ? "Failed" : phaseWhileStarting(tenant, version),
        controlPlane: { status: "False", reason: permanent ? "InvalidSpec" : "ProvisionerError", message },
        defaults: waitingForControlPlane,
      });
      if (permanent) throw new TerminalError(message);
      throw error;
    }

    if (suspended) {
      const stopped = observation.phase === "Stopped" || observation.phase === "Absent";
      await writeStatus(tenant, {
        ...common,
        phase: stopped ? "Suspended" : phaseWhileStarting(tenant, version),
        controlPlane: {
          status: "False",
          reason: "Suspended",
          message: stopped
            ? "Suspended: the control plane is stopped and its data kept. Set spec.suspend to false to resume."
            : "Suspending: stopping the control plane.",
        },
        defaults: {
          status: "Unknown",
          reason: "Suspended",
          message: "Checked again when the tenant resumes.",
        },
      });
      if (!stopped) throw new NotYetError("stopping the control plane", pollMs);
      return { requeueAfterMs: resyncMs };
    }

    const atVersion = !observation.version || observation.version.replace(/^v/, "") === version;
    if (observation.phase !== "Running" || !atVersion) {
      const failed = observation.phase === "Failed";
      await writeStatus(tenant, {
        ...common,
        phase: failed && context.failures >= 2 ? "Failed" : phaseWhileStarting(tenant, version),
        controlPlane: {
          status: "False",
          reason: failed ? "ControlPlaneFailed" : isUpgrade(tenant, version) ? "Upgrading" : "Starting",
          message:
            observation.message ??
            (isUpgrade(tenant, version)
              ? `Moving the control plane to Kubernetes ${version}.`
              : "The control plane is starting."),
        },
        defaults: waitingForControlPlane,
        endpoint: observation.endpoint,
      });
      if (failed) throw new Error(observation.message ?? "the control plane failed");
      throw new NotYetError(`control plane ${observation.phase}`, pollMs);
    }

    // 5. Defaults, with Ring0's admin identity in the tenant's control plane.
    const running: Omit<Observed, "phase" | "defaults"> = {
      ...common,
      controlPlane: {
        status: "True",
        reason: "Running",
        message: `Serving Kubernetes ${observation.version ?? version}.`,
      },
      endpoint: observation.endpoint,
      version: observation.version,
    };
    const access = await provisioner.access(name);
    if (!access) throw new NotYetError("control plane access not available yet", pollMs);
    let pending: string | undefined;
    try {
      const conn = connections.connectionFor(name, access);
      pending = await applyTenantDefaults(conn, { tenant: name, admins: spec.admins ?? [] }, context.signal);
      // The quota webhook follows Tenant.spec.quota: registered with a quota, removed without. Only
      // local control planes can reach Ring0's webhook (127.0.0.1, their client certificate); one
      // in the super cluster would fail every create it covers, so there the syncer alone enforces.
      const webhook = await syncQuotaWebhook(conn, providerName === "local" ? spec.quota : undefined);
      if (providerName !== "local" && spec.quota?.hard && Object.keys(spec.quota.hard).length > 0) {
        log.info(
          "quota enforced by the syncer only: this provisioner's control planes cannot reach Ring0's webhook",
        );
      } else if (webhook === "no-endpoint") {
        log.warn(
          "the tenant has a quota but Ring0's admission webhooks are not serving: only the syncer holds pods back",
        );
      }
    } catch (error) {
      await writeStatus(tenant, {
        ...running,
        phase: context.failures >= 2 ? "Failed" : phaseWhileStarting(tenant, version),
        defaults: {
          status: "False",
          reason: "ApplyFailed",
          message: `Applying the tenant defaults failed: ${messageOf(error)}`,
        },
      });
      throw error;
    }
    if (pending) {
      await writeStatus(tenant, {
        ...running,
        phase: phaseWhileStarting(tenant, version),
        defaults: { status: "False", reason: "Pending", message: pending },
      });
      throw new NotYetError(pending, pollMs);
    }
    await writeStatus(tenant, {
      ...running,
      phase: "Ready",
      defaults: {
        status: "True",
        reason: "Applied",
        message:
          "Namespaces, RBAC for admins, members and viewers, and Ring0's protection policy are in place.",
      },
    });
    return { requeueAfterMs: resyncMs };
  };
}

function isUpgrade(tenant: TenantResource, version: string): boolean {
  const current = tenant.status?.version?.replace(/^v/, "");
  return Boolean(current && current !== version && tenant.status?.timings?.readyAt);
}

function phaseWhileStarting(tenant: TenantResource, version: string): TenantPhase {
  return isUpgrade(tenant, version) ? "Upgrading" : "Provisioning";
}
