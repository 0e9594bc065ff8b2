/**
 * The SharingPolicy reconciler: turns live grants into RBAC in the owner tenant's control plane
 * and writes each grant's status. For one grant key it reads the object fresh, then walks ordered
 * idempotent steps —
 *
 *   1. deletion: remove the grant's Roles and RoleBindings from the owner's control plane, then
 *      drop the finalizer (nothing to remove when the owner tenant is gone);
 *   2. finalizer present (so a delete always cleans up);
 *   3. approval: when operators do not require approval, a grant within the operator policy is
 *      approved by Ring0 (the same annotations an operator writes); one beyond it stays pending;
 *   4. RBAC: a live grant's Roles and RoleBindings applied (server-side apply, forced), and any of
 *      its objects no longer in the manifest set (a namespace removed) deleted; a grant that is not
 *      live has all of its objects deleted;
 *
 * and rebuilds status from what this run saw (status.ts, pure: state; conditions Approved,
 * PolicyCompliant, RBACApplied, Ready), keeping `lastUsedAt`, with an Event on every state change.
 * Reading, the finalizer, Events and the status write are the shared custom-resource skeleton
 * (controllers/custom-resource.ts). A live grant with an expiry is reconciled again just after it,
 * so its RBAC goes without any change to the object. A sweep (its own queue key) removes share
 * RBAC that no grant accounts for any more.
 */
import { NotYetError, type ReconcileContext, type Result } from "@/server/controllers/controller";
import {
  type CustomResourceKind,
  clusterCustomResourceStore,
  createCustomResource,
} from "@/server/controllers/custom-resource";
import type { KubeObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isNotFound } from "@/server/k8s/errors";
import { readSynced } from "@/server/k8s/live";
import type { Logger } from "@/server/logger";
import { createConnectionCache } from "@/server/tenants/connections";
import { type ControlPlaneDirectory, getControlPlaneDirectory } from "@/server/tenants/control-planes";
import { tenantInformer } from "@/server/tenants/tenant-resources";
import {
  approvalAnnotations,
  approvesAutomatically,
  automaticApprover,
  inForce,
  policyViolations,
} from "./approval";
import { expiryOf, grantState, isLive } from "./grants";
import {
  applyGrantRbac,
  labelledRbac,
  rbacByGrant,
  removeGrantRbac,
  removeRbac,
  staleRbac,
} from "./owner-rbac";
import type { SharingPolicyConfig } from "./policy";
import { sharingPolicy } from "./settings";
import {
  approvedCondition,
  buildSharingStatus,
  ownerUnavailable,
  policyCondition,
  rbacAppliedCondition,
  rbacFailedCondition,
  rbacRemovedCondition,
  rbacWithheldCondition,
  type SharingConditionInput,
  type SharingObserved,
  statusEvents,
} from "./status";
import {
  grantLabel,
  type SharingPolicyResource,
  type SharingStatus,
  sharingApiVersion,
  sharingKind,
} from "./types";

export const sharingFinalizer = "ring0.dev/sharing-rbac";

/** SharingPolicies as the reconciler reads and writes them (finalizer, Events, status). */
export const sharingResourceKind: CustomResourceKind = {
  apiVersion: sharingApiVersion,
  kind: sharingKind,
  plural: "sharingpolicies",
  finalizer: sharingFinalizer,
  component: "ring0-sharing-controller",
  // An operator's approval or revocation, or an edit, raced this run: decide from the newer object.
  requeueOnConflict: "the grant changed meanwhile; reading it again",
};

export interface SharingControllerOptions {
  logger: Logger;
  /** Where owner control planes are found. Default: the runtime's (getControlPlaneDirectory()). */
  directory?: ControlPlaneDirectory;
  /** The operator policy in force. Default: sharingPolicy() (RING0_SHARING_POLICY). */
  policy?: () => SharingPolicyConfig;
  now?: () => Date;
  /** Only grants with these labels (tests keep to their own grants in a shared super cluster). */
  labelSelector?: string;
  workers?: number;
  /** Periodic drift check of every grant. Default 5 min. */
  resyncMs?: number;
  /** Retry while an owner's control plane does not serve. Default 5 s. */
  unavailableRetryMs?: number;
  /** Retry while namespaces a grant names do not exist in the owner's control plane. Default 30 s. */
  missingNamespaceRetryMs?: number;
  /** The tenants whose control planes the orphan sweep looks in. Default: every Tenant object. */
  tenants?: () => Promise<string[]>;
}

/**
 * The work-queue key of the orphan sweep, run at the start of every term and at every resync: no
 * grant can have this name (grant names are DNS subdomains), so it never collides with one.
 */
export const orphanSweepKey = ":orphans";

/**
 * When to reconcile a grant again after a successful run: just after its expiry if that comes
 * before the periodic resync (RBAC goes at expiry even though nothing changes in the object).
 */
export function requeueAfterMs(grant: SharingPolicyResource, now: Date, resyncMs: number): number {
  const expiry = expiryOf(grant);
  if (!expiry || expiry.getTime() <= now.getTime()) return resyncMs;
  return Math.min(resyncMs, expiry.getTime() - now.getTime() + 1_000);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function createSharingReconciler(superCluster: ClusterConnection, options: SharingControllerOptions) {
  const now = options.now ?? (() => new Date());
  const policyOf = options.policy ?? sharingPolicy;
  const resyncMs = options.resyncMs ?? 5 * 60_000;
  const unavailableRetryMs = options.unavailableRetryMs ?? 5_000;
  const missingNamespaceRetryMs = options.missingNamespaceRetryMs ?? 30_000;
  const connections = createConnectionCache();
  const grants = createCustomResource<SharingPolicyResource, SharingStatus>(
    sharingResourceKind,
    clusterCustomResourceStore(superCluster, {
      component: sharingResourceKind.component,
      logger: options.logger,
    }),
  );

  /** Rebuilds the status on a fresh read (keeping lastUsedAt), then the Events the change is worth. */
  async function writeStatus(grant: SharingPolicyResource, observed: SharingObserved): Promise<void> {
    let previous: SharingStatus;
    try {
      ({ previous } = await grants.writeStatus(grant.metadata.name, (status) =>
        buildSharingStatus(status, observed, now()),
      ));
    } catch (error) {
      // Deleted meanwhile: nothing left to report on.
      if (isNotFound(error)) return;
      throw error;
    }
    for (const event of statusEvents(previous, observed)) {
      await grants.event(grant, event.type, event.reason, event.message);
    }
  }

  /** Where the owner's control plane is: a connection, or why there is none (gone, or not serving). */
  async function ownerControlPlane(
    owner: string,
  ): Promise<
    { conn: ClusterConnection } | { gone: true; message: string } | { gone: false; message: string }
  > {
    const directory = options.directory ?? getControlPlaneDirectory();
    if (!directory) return { gone: false, message: "Ring0's control plane directory is not running yet." };
    const lookup = await directory.lookup(owner);
    if (lookup.state === "absent") {
      connections.forget(owner);
      return { gone: true, message: `The owner tenant "${owner}" does not exist.` };
    }
    if (lookup.state === "unavailable") {
      return { gone: lookup.phase === "Deleting", message: lookup.message };
    }
    return { conn: connections.connectionFor(owner, lookup.access) };
  }

  async function tearDown(grant: SharingPolicyResource, log: Logger): Promise<void> {
    if (!grants.hasFinalizer(grant)) return;
    const owner = await ownerControlPlane(grant.spec.ownerTenant);
    if ("conn" in owner) {
      await removeGrantRbac(owner.conn, grant.metadata.name);
    } else if (!owner.gone) {
      // The RBAC is still there, in a control plane that will serve again: remove it then.
      throw new NotYetError(`waiting to remove the grant's RBAC: ${owner.message}`, unavailableRetryMs);
    }
    if (await grants.removeFinalizer(grant.metadata.name)) {
      log.info("grant deleted: its RBAC is removed from the owner's control plane");
    }
  }

  async function tenantNames(): Promise<string[]> {
    const informer = tenantInformer(superCluster);
    return readSynced([informer], "tenants", () => informer.snapshot().map((tenant) => tenant.metadata.name));
  }

  /**
   * Removes share RBAC no grant accounts for: a grant deleted while its finalizer was removed by
   * hand, or one whose ownerTenant was edited (its objects stay in the old owner's control plane).
   * Each grant is read fresh before its objects go, so a grant created meanwhile keeps them.
   */
  async function sweepOrphans(log: Logger): Promise<void> {
    for (const tenant of await (options.tenants ?? tenantNames)()) {
      const owner = await ownerControlPlane(tenant);
      if (!("conn" in owner)) continue;
      let byGrant: Map<string, KubeObject[]>;
      try {
        byGrant = rbacByGrant(await labelledRbac(owner.conn, grantLabel));
      } catch (error) {
        log.warn("listing share RBAC failed; orphan check skipped for this tenant", { tenant, error });
        continue;
      }
      for (const [grant, objects] of byGrant) {
        const current = await grants.read(grant);
        if (current && current.spec.ownerTenant === tenant) continue;
        await removeRbac(owner.conn, staleRbac([], objects));
        log.info("removed share RBAC no grant accounts for", { tenant, grant });
      }
    }
  }

  return async function reconcile(name: string, context: ReconcileContext): Promise<Result | undefined> {
    if (name === orphanSweepKey) {
      await sweepOrphans(context.logger);
      return { requeueAfterMs: resyncMs };
    }
    const log = context.logger.child({ grant: name });
    let grant = await grants.read(name);
    if (!grant) return undefined;

    // 1. Deletion.
    if (grant.metadata.deletionTimestamp) {
      await tearDown(grant, log);
      return undefined;
    }

    // 2. Finalizer.
    if (!grants.hasFinalizer(grant)) grant = await grants.addFinalizer(grant);

    // 3. Approval.
    const policy = policyOf();
    const at = now();
    const violations = policyViolations(grant, policy, at);
    if (approvesAutomatically(grantState(grant, at), policy, violations)) {
      grant = await grants.patchMetadata(grant, {
        annotations: approvalAnnotations(grant, automaticApprover, at),
      });
      log.info("grant approved: operators do not require approval and it is within policy");
    }
    const decision = grantState(grant, at);
    const base = {
      generation: grant.metadata.generation,
      decision,
      approved: approvedCondition(grant, violations),
      policy: policyCondition(violations),
    };

    // 4. RBAC in the owner's control plane.
    const owner = await ownerControlPlane(grant.spec.ownerTenant);
    if (!("conn" in owner)) {
      await writeStatus(grant, { ...base, ...ownerUnavailable(owner, isLive(grant, at)) });
      throw new NotYetError(owner.message, owner.gone ? missingNamespaceRetryMs : unavailableRetryMs);
    }
    let rbac: SharingConditionInput;
    let retryMs: number | undefined;
    try {
      if (inForce(grant, violations, at)) {
        const outcome = await applyGrantRbac(owner.conn, grant, policyOf, context.signal);
        rbac = rbacAppliedCondition(outcome);
        if (outcome.missing.length > 0) retryMs = missingNamespaceRetryMs;
      } else if (isLive(grant, at)) {
        await removeGrantRbac(owner.conn, name);
        rbac = rbacWithheldCondition(violations);
      } else {
        await removeGrantRbac(owner.conn, name);
        rbac = rbacRemovedCondition(decision);
      }
    } catch (error) {
      if (context.signal.aborted) throw error;
      await writeStatus(grant, { ...base, rbac: rbacFailedCondition(messageOf(error)) }).catch(
        (statusError) => log.debug("status write after a failed apply failed", { error: statusError }),
      );
      throw error;
    }
    await writeStatus(grant, { ...base, rbac });
    const next = requeueAfterMs(grant, now(), resyncMs);
    return { requeueAfterMs: retryMs === undefined ? next : Math.min(next, retryMs) };
  };
}
