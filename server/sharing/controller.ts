/**
 * The SharingPolicy controller: turns live grants into RBAC in the owner tenant's control plane
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
 * and rebuilds status from what this run saw (state; conditions Approved, PolicyCompliant,
 * RBACApplied, Ready), keeping `lastUsedAt`, with an Event on every state change. A live grant with
 * an expiry is reconciled again just after it, so its RBAC goes without any change to the object.
 * A sweep (its own queue key) removes share RBAC that no grant accounts for any more.
 */
import {
  type Controller,
  createController,
  NotYetError,
  type ReconcileContext,
  type Result,
} from "@/server/controllers/controller";
import { updateStatusWithRetry } from "@/server/controllers/status";
import { deleteObject, type KubeObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { namespacedResources } from "@/server/k8s/discovery";
import { isConflict, isNotFound, K8sError } from "@/server/k8s/errors";
import { recordEvent } from "@/server/k8s/events";
import { sharedInformer } from "@/server/k8s/informers";
import { readSynced } from "@/server/k8s/live";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import { createConnectionCache } from "@/server/tenants/connections";
import { type ControlPlaneDirectory, getControlPlaneDirectory } from "@/server/tenants/control-planes";
import { protectedLabel } from "@/server/tenants/defaults";
import { tenantInformer } from "@/server/tenants/tenant-resources";
import { expiryOf, type GrantStateDecision, grantState, isLive, specHash } from "./grants";
import { checkGrant, type GrantViolation, type SharingPolicyConfig, violationsMessage } from "./policy";
import { grantRbacManifests, grantRbacName, hasWildcard } from "./rbac";
import { sharingPolicy } from "./settings";
import {
  buildSharingStatus,
  type SharingConditionInput,
  type SharingObserved,
  stateChangeEvent,
} from "./status";
import {
  grantLabel,
  type SharingPolicyResource,
  type SharingStatus,
  sharingAnnotations,
  sharingApiVersion,
  sharingKind,
  sharingPath,
} from "./types";

export const sharingFinalizer = "ring0.dev/sharing-rbac";
/** Who approved a grant when operators do not require approval. */
export const automaticApprover = "Ring0 (no approval required)";

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

// ---- Pure decisions (unit-tested) ----

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

const rbacKey = (object: Pick<KubeObject, "kind" | "metadata">) =>
  `${object.kind}/${object.metadata.namespace ?? ""}/${object.metadata.name}`;

/**
 * The grant's objects in the owner's control plane that are not in `desired` (a namespace removed
 * from the grant, or every object of a grant that is no longer live), RoleBindings first: a binding
 * without its Role grants nothing, while a Role left without a binding would be harmless too.
 */
export function staleRbac(desired: readonly KubeObject[], existing: readonly KubeObject[]): KubeObject[] {
  const wanted = new Set(desired.map(rbacKey));
  return existing
    .filter((object) => !wanted.has(rbacKey(object)))
    .sort((a, b) => (a.kind === b.kind ? 0 : a.kind === "RoleBinding" ? -1 : 1));
}

/**
 * The share RBAC in one tenant's control plane, by the grant its label names (the orphan sweep then
 * re-reads each grant: only one that is gone, or that names another owner now, loses its objects).
 */
export function rbacByGrant(objects: readonly KubeObject[]): Map<string, KubeObject[]> {
  const byGrant = new Map<string, KubeObject[]>();
  for (const object of objects) {
    const grant = object.metadata.labels?.[grantLabel];
    if (!grant) continue;
    byGrant.set(grant, [...(byGrant.get(grant) ?? []), object]);
  }
  return byGrant;
}

/**
 * When to reconcile a grant again after a successful run: just after its expiry if that comes
 * before the periodic resync (RBAC goes at expiry even though nothing changes in the object).
 */
export function requeueAfterMs(grant: SharingPolicyResource, now: Date, resyncMs: number): number {
  const expiry = expiryOf(grant);
  if (!expiry || expiry.getTime() <= now.getTime()) return resyncMs;
  return Math.min(resyncMs, expiry.getTime() - now.getTime() + 1_000);
}

/**
 * The operator policy's verdict on a grant. An expired grant is judged as it stood just before its
 * expiry, so an expiry in the past is not reported as a violation of a grant that simply ended.
 */
export function policyViolations(
  grant: SharingPolicyResource,
  policy: SharingPolicyConfig,
  now: Date,
): GrantViolation[] {
  const expiry = expiryOf(grant);
  const at = expiry && expiry.getTime() <= now.getTime() ? new Date(expiry.getTime() - 1) : now;
  return checkGrant(grant.spec, policy, at);
}

/**
 * Whether the grant's RBAC belongs in the owner's control plane: live, and within the operator
 * policy in force. An approval does not lift the policy (an operator's annotation written by hand,
 * or a policy tightened after the approval): such a grant gives no access through RBAC.
 */
export function inForce(
  grant: SharingPolicyResource,
  violations: readonly GrantViolation[],
  now: Date,
): boolean {
  return isLive(grant, now) && violations.length === 0;
}

/** Whether Ring0 approves the grant itself: pending, approval not required, within policy. */
export function approvesAutomatically(
  decision: GrantStateDecision,
  policy: SharingPolicyConfig,
  violations: readonly GrantViolation[],
): boolean {
  return decision.state === "PendingApproval" && !policy.requireApproval && violations.length === 0;
}

/** The annotations of an approval of the grant's current spec. */
export function approvalAnnotations(
  grant: SharingPolicyResource,
  by: string,
  now: Date,
): Record<string, string> {
  return {
    [sharingAnnotations.approvedSpec]: specHash(grant.spec),
    [sharingAnnotations.approvedBy]: by,
    [sharingAnnotations.approvedAt]: now.toISOString(),
  };
}

export function policyCondition(violations: readonly GrantViolation[]): SharingConditionInput {
  return violations.length === 0
    ? {
        status: "True",
        reason: "WithinPolicy",
        message: "The grant is within the operators' sharing policy.",
      }
    : { status: "False", reason: "BeyondPolicy", message: violationsMessage(violations) };
}

export function approvedCondition(
  grant: SharingPolicyResource,
  violations: readonly GrantViolation[],
): SharingConditionInput {
  const annotations = grant.metadata.annotations ?? {};
  const approvedSpec = annotations[sharingAnnotations.approvedSpec];
  if (approvedSpec && approvedSpec === specHash(grant.spec)) {
    const at = annotations[sharingAnnotations.approvedAt];
    return {
      status: "True",
      reason: "Approved",
      message: `Approved by ${annotations[sharingAnnotations.approvedBy] ?? "an operator"}${at ? ` at ${at}` : ""}.`,
    };
  }
  if (violations.length > 0) {
    return {
      status: "False",
      reason: "BeyondPolicy",
      message: "The grant breaks the sharing policy, so it cannot be approved; change it to fit the policy.",
    };
  }
  return approvedSpec
    ? {
        status: "False",
        reason: "ChangedSinceApproval",
        message: "The grant changed since it was approved; an operator must approve it again.",
      }
    : {
        status: "False",
        reason: "AwaitingApproval",
        message: "Waiting for an operator to approve the grant.",
      };
}

/** The owner's refusal of one object for good (invalid, forbidden), as opposed to a failure worth a retry. */
export function isRefusal(error: unknown): error is K8sError {
  return error instanceof K8sError && [400, 403, 422].includes(error.status);
}

/** Whether an apply failed because its namespace does not exist in the owner's control plane. */
export function isMissingNamespace(error: unknown): boolean {
  if (!isNotFound(error)) return false;
  const details = (error as K8sError).details;
  return details?.kind === "namespaces" || /namespaces? "[^"]*" not found/.test((error as Error).message);
}

/** A grant name is usable as a label value (grantLabel) only up to 63 characters. */
export function isLabelValue(value: string): boolean {
  return /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(value) && value.length <= 63;
}

const whichObject = (object: KubeObject) =>
  `${object.kind} "${object.metadata.name}" in namespace "${object.metadata.namespace}"`;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---- The reconciler ----

const statusRef = (name: string) => ({ apiVersion: sharingApiVersion, resource: "sharingpolicies", name });
const grantPath = (name: string) => `${sharingPath}/${encodeURIComponent(name)}`;
const rbacPath = "/apis/rbac.authorization.k8s.io/v1";

export function createSharingReconciler(superCluster: ClusterConnection, options: SharingControllerOptions) {
  const now = options.now ?? (() => new Date());
  const policyOf = options.policy ?? sharingPolicy;
  const resyncMs = options.resyncMs ?? 5 * 60_000;
  const unavailableRetryMs = options.unavailableRetryMs ?? 5_000;
  const missingNamespaceRetryMs = options.missingNamespaceRetryMs ?? 30_000;
  const connections = createConnectionCache();

  async function read(name: string): Promise<SharingPolicyResource | null> {
    try {
      return await kubeRequest<SharingPolicyResource>(superCluster, {
        path: grantPath(name),
        timeoutMs: 15_000,
      });
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /**
   * Merge patch of metadata guarded by resourceVersion: a concurrent change (an operator's approval
   * or revocation, an edit) is a 409, and the next run decides from the newer object.
   */
  async function patchMetadata(
    grant: SharingPolicyResource,
    metadata: Record<string, unknown>,
  ): Promise<SharingPolicyResource> {
    try {
      return await kubeRequest<SharingPolicyResource>(superCluster, {
        method: "PATCH",
        path: grantPath(grant.metadata.name),
        contentType: "application/merge-patch+json",
        body: { metadata: { ...metadata, resourceVersion: grant.metadata.resourceVersion } },
        timeoutMs: 15_000,
      });
    } catch (error) {
      if (isConflict(error)) throw new NotYetError("the grant changed meanwhile; reading it again", 0);
      throw error;
    }
  }

  const event = (grant: SharingPolicyResource, type: "Normal" | "Warning", reason: string, message: string) =>
    recordEvent(
      superCluster,
      {
        apiVersion: sharingApiVersion,
        kind: sharingKind,
        name: grant.metadata.name,
        uid: grant.metadata.uid,
      },
      { type, reason, message },
      { component: "ring0-sharing-controller", logger: options.logger },
    );

  /** Rebuilds the status on a fresh read (keeping lastUsedAt), then an Event if the state changed. */
  async function writeStatus(grant: SharingPolicyResource, observed: SharingObserved): Promise<void> {
    let previous: SharingStatus = {};
    try {
      await updateStatusWithRetry<SharingStatus>(superCluster, statusRef(grant.metadata.name), (status) => {
        previous = structuredClone(status);
        return buildSharingStatus(status, observed, now());
      });
    } catch (error) {
      // Deleted meanwhile: nothing left to report on.
      if (isNotFound(error)) return;
      throw error;
    }
    const change = stateChangeEvent(previous.state, observed);
    if (change) await event(grant, change.type, change.reason, change.message);
    // A refusal, or RBAC withheld from an Active grant, is news once, not at every resync.
    const before = previous.conditions?.find((condition) => condition.type === "RBACApplied");
    const warning = { Refused: "RBACRefused", BeyondPolicy: "BeyondPolicy" }[observed.rbac.reason];
    if (warning && before?.message !== observed.rbac.message) {
      await event(grant, "Warning", warning, observed.rbac.message);
    }
  }

  /** The grant's Roles and RoleBindings in the owner's control plane, found by their label. */
  async function existingRbac(conn: ClusterConnection, grant: string): Promise<KubeObject[]> {
    if (!isLabelValue(grant)) return []; // Such a grant's objects are refused: none can exist.
    return labelledRbac(conn, `${grantLabel}=${grant}`);
  }

  /**
   * Ring0's Roles and RoleBindings across the control plane's namespaces matching a label selector.
   * Only protected ones: the tenant's own objects (which cannot carry that label) are never touched,
   * whatever other labels they copy.
   */
  async function labelledRbac(conn: ClusterConnection, labelSelector: string): Promise<KubeObject[]> {
    const query = { labelSelector: `${labelSelector},${protectedLabel}=true` };
    const [roles, bindings] = await Promise.all(
      (["roles", "rolebindings"] as const).map((resource) =>
        kubeRequest<{ items: KubeObject[] }>(conn, {
          path: `${rbacPath}/${resource}`,
          query,
          timeoutMs: 15_000,
        }),
      ),
    );
    return [
      ...(roles?.items ?? []).map((item) => ({
        ...item,
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
      })),
      ...(bindings?.items ?? []).map((item) => ({
        ...item,
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
      })),
    ];
  }

  async function removeRbac(conn: ClusterConnection, objects: readonly KubeObject[]): Promise<void> {
    for (const object of objects) {
      await deleteObject(conn, {
        apiVersion: object.apiVersion,
        kind: object.kind,
        metadata: { name: object.metadata.name, namespace: object.metadata.namespace },
      });
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
    if (!grant.metadata.finalizers?.includes(sharingFinalizer)) return;
    const owner = await ownerControlPlane(grant.spec.ownerTenant);
    if ("conn" in owner) {
      await removeRbac(owner.conn, staleRbac([], await existingRbac(owner.conn, grant.metadata.name)));
    } else if (!owner.gone) {
      // The RBAC is still there, in a control plane that will serve again: remove it then.
      throw new NotYetError(`waiting to remove the grant's RBAC: ${owner.message}`, unavailableRetryMs);
    }
    const fresh = await read(grant.metadata.name);
    if (!fresh?.metadata.finalizers?.includes(sharingFinalizer)) return;
    await patchMetadata(fresh, {
      finalizers: fresh.metadata.finalizers.filter((finalizer) => finalizer !== sharingFinalizer),
    });
    log.info("grant deleted: its RBAC is removed from the owner's control plane");
  }

  /** Applies a live grant's RBAC and removes what it no longer covers; the RBACApplied condition. */
  async function applyRbac(
    conn: ClusterConnection,
    grant: SharingPolicyResource,
    signal: AbortSignal,
  ): Promise<{ condition: SharingConditionInput; missing: string[] }> {
    // Wildcard rules are spelled out against what the owner's control plane serves now.
    const discovered = grant.spec.rules.some(hasWildcard) ? await namespacedResources(conn) : undefined;
    const expansion = discovered && { served: discovered.resources, policy: policyOf() };
    const desired = grantRbacManifests(grant, expansion);
    const missing = new Set<string>();
    const refused: string[] = [];
    for (const manifest of desired) {
      signal.throwIfAborted();
      const namespace = manifest.metadata.namespace ?? "";
      if (missing.has(namespace)) continue;
      try {
        await serverSideApply(conn, manifest, { force: true });
      } catch (error) {
        if (isMissingNamespace(error)) {
          missing.add(namespace);
        } else if (isRefusal(error)) {
          refused.push(`${whichObject(manifest)}: ${error.message}`);
          // An older version of the refused object would keep rights the grant no longer gives.
          await deleteObject(conn, manifest);
        } else {
          throw error;
        }
      }
    }
    await removeRbac(conn, staleRbac(desired, await existingRbac(conn, grant.metadata.name)));
    const name = grantRbacName(grant.metadata.name);
    const namespaces = [...new Set(desired.map((manifest) => manifest.metadata.namespace ?? ""))];
    const applied = namespaces.filter((namespace) => !missing.has(namespace));
    if (refused.length > 0) {
      return {
        condition: {
          status: "False",
          reason: "Refused",
          message: `The owner's control plane refused the grant's RBAC: ${refused.join("; ")}`,
        },
        missing: [...missing],
      };
    }
    if (missing.size > 0) {
      const list = [...missing].map((namespace) => `"${namespace}"`).join(", ");
      return {
        condition: {
          status: "False",
          reason: "NamespaceMissing",
          message: `The owner tenant has no namespace ${list}: nothing is shared there until it exists.${
            applied.length > 0
              ? ` Applied in ${applied.map((namespace) => `"${namespace}"`).join(", ")}.`
              : ""
          }`,
        },
        missing: [...missing],
      };
    }
    return {
      condition: {
        status: "True",
        reason: "Applied",
        message: `Role and RoleBinding "${name}" are in namespace${applied.length === 1 ? "" : "s"} ${applied
          .map((namespace) => `"${namespace}"`)
          .join(", ")} of the owner's control plane.${
          discovered?.unavailable.length
            ? ` The wildcard rules do not cover the API groups whose discovery failed (${discovered.unavailable.join(", ")}) until it answers again.`
            : ""
        }`,
      },
      missing: [],
    };
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
        const current = await read(grant);
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
    let grant = await read(name);
    if (!grant) return undefined;

    // 1. Deletion.
    if (grant.metadata.deletionTimestamp) {
      await tearDown(grant, log);
      return undefined;
    }

    // 2. Finalizer.
    if (!grant.metadata.finalizers?.includes(sharingFinalizer)) {
      grant = await patchMetadata(grant, {
        finalizers: [...(grant.metadata.finalizers ?? []), sharingFinalizer],
      });
    }

    // 3. Approval.
    const policy = policyOf();
    const at = now();
    const violations = policyViolations(grant, policy, at);
    if (approvesAutomatically(grantState(grant, at), policy, violations)) {
      grant = await patchMetadata(grant, { annotations: approvalAnnotations(grant, automaticApprover, at) });
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
      const live = isLive(grant, at);
      await writeStatus(grant, {
        ...base,
        rbac: {
          status: live ? "False" : "Unknown",
          reason: owner.gone ? "OwnerNotFound" : "ControlPlaneUnavailable",
          message: owner.message,
        },
        blocked: {
          reason: owner.gone ? "OwnerNotFound" : "ControlPlaneUnavailable",
          message: `${owner.message} The grant takes effect once it serves.`,
        },
      });
      throw new NotYetError(owner.message, owner.gone ? missingNamespaceRetryMs : unavailableRetryMs);
    }
    let rbac: SharingConditionInput;
    let retryMs: number | undefined;
    try {
      if (inForce(grant, violations, at)) {
        const applied = await applyRbac(owner.conn, grant, context.signal);
        rbac = applied.condition;
        if (applied.missing.length > 0) retryMs = missingNamespaceRetryMs;
      } else if (isLive(grant, at)) {
        await removeRbac(owner.conn, staleRbac([], await existingRbac(owner.conn, name)));
        rbac = {
          status: "False",
          reason: "BeyondPolicy",
          message: `${violationsMessage(violations)} Approved or not, it gets no Roles or RoleBindings in the owner's control plane.`,
        };
      } else {
        await removeRbac(owner.conn, staleRbac([], await existingRbac(owner.conn, name)));
        rbac = {
          status: "False",
          reason: "Removed",
          message: `The grant is ${decision.state === "PendingApproval" ? "pending approval" : decision.state.toLowerCase()}: it has no Roles or RoleBindings in the owner's control plane.`,
        };
      }
    } catch (error) {
      if (context.signal.aborted) throw error;
      await writeStatus(grant, {
        ...base,
        rbac: {
          status: "False",
          reason: "ApplyFailed",
          message: `Reconciling the grant's RBAC failed: ${messageOf(error)}`,
        },
      }).catch((statusError) =>
        log.debug("status write after a failed apply failed", { error: statusError }),
      );
      throw error;
    }
    await writeStatus(grant, { ...base, rbac });
    const next = requeueAfterMs(grant, now(), resyncMs);
    return { requeueAfterMs: retryMs === undefined ? next : Math.min(next, retryMs) };
  };
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
