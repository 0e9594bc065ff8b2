/**
 * Reconciling one key of a tenant: copy an object down (or delete its copy), a pod down and its
 * status, node and events up. Reads come from the caches; writes are idempotent (server-side
 * apply as "ring0" with a hash annotation, so an unchanged object is not written again).
 *
 * A pod deleted or evicted below after it was bound turns Failed with reason Evicted in the tenant
 * (a kubelet does the same with an evicted pod): its node is fixed once bound, so the tenant's
 * controllers replace it rather than the syncer resurrecting it elsewhere. A pod the tenant
 * deletes is deleted below first; then the syncer finishes the tenant's graceful deletion, as the
 * kubelet would.
 */
import { deleteObject, type KubeObject, serverSideApply } from "@/server/k8s/apply";
import { isConflict, isNotFound, K8sError } from "@/server/k8s/errors";
import { recordEvent } from "@/server/k8s/events";
import type { V1Pod } from "@/server/k8s/nodes";
import { kubeRequest } from "@/server/k8s/transport";
import { ensureDefaultShare, isNewNamespace } from "@/server/quotas/default-share";
import type { PodLike } from "@/server/quotas/usage";
import { type IsolationViolation, syncAnnotations, syncLabels } from "./contracts";
import { checkPodIsolation } from "./filter";
import { runningPodPolicy } from "./isolation-policy";
import { superNamespace } from "./naming";
import { decideHold, quotaConditionType } from "./quota-hold";
import {
  boundByRing0,
  boundNodeAnnotation,
  isTerminal,
  nodeNameOf,
  type Obj,
  readOrNull,
  type SyncContext,
  syncerComponent,
  type TenantSession,
} from "./session";
import { isSynced, type Json, kindInfo, malformedReason, type SyncedKind } from "./synced-kinds";
import { superObject, syncHashOf, withSyncHash, writtenBySyncer } from "./translate";
import { isolationConditionType, podStatusPatch, serviceStatusPatch } from "./upward-status";
import type { VNodes } from "./vnodes";

export interface Reconcilers {
  /** Namespaces, config maps, secrets, service accounts, services and endpoints. */
  syncObject(session: TenantSession, kind: SyncedKind, namespace: string, name: string): Promise<void>;
  syncPod(session: TenantSession, namespace: string, name: string): Promise<void>;
  /** Copy an event about a synced pod up into the tenant namespace. */
  syncEvent(session: TenantSession, namespace: string, name: string): Promise<void>;
}

function podRef(namespace: string, name: string) {
  return { apiVersion: "v1", kind: "Pod", metadata: { name, namespace } };
}

/** The condition message of a refused pod: the rules it broke, then what to change for each. */
function isolationMessage(violations: IsolationViolation[]): string {
  const rules = [...new Set(violations.map((violation) => violation.rule))].join(", ");
  return `Refused by ${rules}: ${violations.map((violation) => violation.message).join(" ")}`;
}

function podPath(namespace: string, name: string, subresource?: string): string {
  const base = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
  return subresource ? `${base}/${subresource}` : base;
}

export function createReconcilers(ctx: SyncContext, vNodes: VNodes): Reconcilers {
  const { log } = ctx;
  /** Warnings already recorded (tenant|kind|ns|name|resourceVersion), so a refused object warns once. */
  const warned = new Set<string>();
  /** Pods below whose update the super cluster refused (tenant|uid|hash), logged once each. */
  const keptAsIs = new Set<string>();

  function superRef(tenant: string, kind: SyncedKind, namespace: string, name: string) {
    const info = kindInfo[kind];
    if (kind === "namespace") {
      return {
        apiVersion: info.apiVersion,
        kind: info.kind,
        metadata: { name: superNamespace(tenant, name) },
      };
    }
    return {
      apiVersion: info.apiVersion,
      kind: info.kind,
      metadata: { name, namespace: superNamespace(tenant, namespace) },
    };
  }

  /** A Warning event on the tenant's object, once per version of it. */
  async function warnOnce(
    session: TenantSession,
    kind: SyncedKind,
    object: Obj,
    reason: string,
    message: string,
  ) {
    const id = [
      session.tenant,
      kind,
      object.metadata.namespace,
      object.metadata.name,
      object.metadata.resourceVersion,
    ].join("|");
    if (warned.has(id)) return;
    warned.add(id);
    if (warned.size > 10_000) warned.clear();
    log.warn("tenant object refused", {
      tenant: session.tenant,
      kind,
      name: object.metadata.name,
      reason,
      message,
    });
    await recordEvent(
      session.conn,
      {
        apiVersion: kindInfo[kind].apiVersion,
        kind: kindInfo[kind].kind,
        name: object.metadata.name,
        ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
        ...(object.metadata.uid ? { uid: object.metadata.uid } : {}),
      },
      { type: "Warning", reason, message },
      { component: syncerComponent, logger: log },
    );
  }

  async function ensureNamespace(session: TenantSession, namespace: string): Promise<void> {
    if (session.namespaces.has(namespace)) return;
    const tenantNamespace = session.caches.namespace.get("", namespace) ?? {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: namespace },
    };
    const desired = withSyncHash(
      superObject(session.tenant, "namespace", tenantNamespace as Obj, {}, session.isolation),
    );
    const current = ctx.superNamespaces()?.get("", desired.metadata.name);
    if (current?.metadata.deletionTimestamp) {
      throw new K8sError({
        status: 409,
        reason: "Conflict",
        message: `namespace ${desired.metadata.name} is still being deleted in the super cluster`,
      });
    }
    if (syncHashOf(current) !== syncHashOf(desired))
      await serverSideApply(ctx.superCluster, desired, { force: true });
    session.namespaces.add(namespace);
  }

  /**
   * A new tenant namespace without a ResourceQuota gets the tenant's default share (once per
   * namespace per session). A refusal by the quota webhook (the share no longer fits) is warned
   * about on the namespace, not retried: the namespace is then bounded by the tenant quota alone.
   */
  async function giveDefaultShare(session: TenantSession, namespace: Obj): Promise<void> {
    const name = namespace.metadata.name;
    if (!ctx.namespaceDefaultShare || session.defaultShares.has(name)) return;
    if (!isNewNamespace(namespace.metadata.creationTimestamp, ctx.clock.now())) {
      session.defaultShares.add(name);
      return;
    }
    const hard = await ctx.namespaceDefaultShare(session.tenant);
    if (hard) {
      try {
        if (await ensureDefaultShare(session.conn, name, hard)) {
          log.info("gave a new namespace the default share", { tenant: session.tenant, namespace: name });
        }
      } catch (error) {
        if (!(error instanceof K8sError && [400, 403, 422].includes(error.status))) throw error;
        await warnOnce(session, "namespace", namespace, "DefaultShareRefused", error.message);
      }
    }
    session.defaultShares.add(name);
  }

  /** Namespaces, config maps, secrets, service accounts, services and endpoints: copy down or delete below. */
  async function syncObject(session: TenantSession, kind: SyncedKind, namespace: string, name: string) {
    const { tenant } = session;
    const cache = session.caches[kind];
    const object = kind === "namespace" ? cache.get("", name) : cache.get(namespace, name);
    const services = (service: string) => session.caches.service.get(namespace, service);
    const ref = superRef(tenant, kind, namespace, name);
    if (!object || object.metadata.deletionTimestamp || !isSynced(kind, object, services)) {
      if (kind === "namespace" && object && !isSynced(kind, object)) return;
      const current = await readOrNull(ctx.superCluster, ref);
      if (current && writtenBySyncer(kind, current, tenant) && !current.metadata.deletionTimestamp) {
        await deleteObject(ctx.superCluster, ref);
        if (kind === "namespace") session.namespaces.delete(name);
      }
      return;
    }
    const malformed = malformedReason(kind, object);
    if (malformed) {
      await warnOnce(session, kind, object, "SyncRefused", malformed);
      return;
    }
    if (kind === "namespace") {
      session.namespaces.delete(name);
      await ensureNamespace(session, name);
      await giveDefaultShare(session, object);
      return;
    }
    await ensureNamespace(session, namespace);
    const desired = withSyncHash(superObject(tenant, kind, object, {}, session.isolation));
    const current = await readOrNull<Obj>(ctx.superCluster, ref);
    if (current && syncHashOf(current) === syncHashOf(desired)) {
      if (kind === "service") await copyServiceStatus(session, object, current);
      return;
    }
    if (current && current.metadata.labels?.[syncLabels.tenant] !== tenant) {
      await warnOnce(
        session,
        kind,
        object,
        "SyncConflict",
        `${ref.metadata.namespace}/${name} exists in the super cluster and is not this tenant's; not overwritten.`,
      );
      return;
    }
    try {
      const written = await serverSideApply<Obj>(ctx.superCluster, desired, { force: true });
      if (kind === "service") await copyServiceStatus(session, object, written);
    } catch (error) {
      if (error instanceof K8sError && (error.reason === "Invalid" || error.reason === "BadRequest")) {
        await warnOnce(
          session,
          kind,
          object,
          "SyncRefused",
          `The super cluster refused ${kindInfo[kind].kind} ${name}: ${error.message}`,
        );
        return;
      }
      throw error;
    }
  }

  /** Upward: the load balancer the super cluster reports for the service's copy. */
  async function copyServiceStatus(session: TenantSession, service: Obj, below: Obj): Promise<void> {
    const patch = serviceStatusPatch(service.status as Json | undefined, below.status as Json | undefined);
    if (!patch) return;
    const namespace = service.metadata.namespace ?? "";
    try {
      await kubeRequest(session.conn, {
        method: "PATCH",
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/services/${encodeURIComponent(service.metadata.name)}/status`,
        contentType: "application/merge-patch+json",
        body: { status: patch },
        timeoutMs: 15_000,
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async function deleteTenantPod(session: TenantSession, pod: Obj): Promise<void> {
    try {
      await kubeRequest(session.conn, {
        method: "DELETE",
        path: podPath(pod.metadata.namespace ?? "", pod.metadata.name),
        body: {
          apiVersion: "v1",
          kind: "DeleteOptions",
          gracePeriodSeconds: 0,
          preconditions: { uid: pod.metadata.uid },
        },
        timeoutMs: 15_000,
      });
    } catch (error) {
      if (!isNotFound(error) && !isConflict(error)) throw error;
    }
  }

  async function patchPodStatus(
    session: TenantSession,
    namespace: string,
    name: string,
    status: Json,
    strategic = false,
  ): Promise<void> {
    try {
      await kubeRequest(session.conn, {
        method: "PATCH",
        path: podPath(namespace, name, "status"),
        contentType: strategic ? "application/strategic-merge-patch+json" : "application/merge-patch+json",
        body: { status },
        timeoutMs: 15_000,
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async function reportIsolation(session: TenantSession, pod: Obj, message: string): Promise<void> {
    const conditions = ((pod.status as { conditions?: Json[] } | undefined)?.conditions ?? []) as Json[];
    const existing = conditions.find((condition) => condition.type === isolationConditionType);
    if (existing?.message === message) return;
    const namespace = pod.metadata.namespace ?? "";
    await recordEvent(
      session.conn,
      { apiVersion: "v1", kind: "Pod", name: pod.metadata.name, namespace, uid: pod.metadata.uid },
      {
        type: "Warning",
        reason: "IsolationViolation",
        message: `Ring0 will not run this pod on shared nodes: ${message}`,
      },
      { component: syncerComponent, logger: log },
    );
    await patchPodStatus(
      session,
      namespace,
      pod.metadata.name,
      {
        conditions: [
          {
            type: isolationConditionType,
            status: "False",
            reason: "IsolationViolation",
            message,
            lastTransitionTime: new Date(ctx.clock.now()).toISOString(),
          },
        ],
      },
      true,
    );
  }

  /** Every tenant pod, and whether it is synced below (same UID). */
  function* tenantPodsWithPlacement(session: TenantSession) {
    const superPods = ctx.superPods();
    for (const pod of session.caches.pod.values()) {
      const namespace = pod.metadata.namespace ?? "";
      const below = superPods?.get(superNamespace(session.tenant, namespace), pod.metadata.name);
      yield {
        key: `${namespace}/${pod.metadata.name}`,
        pod: pod as PodLike,
        below: below !== undefined && below.metadata.annotations?.[syncAnnotations.uid] === pod.metadata.uid,
      };
    }
  }

  function quotaCondition(pod: Obj): Json | undefined {
    const conditions = ((pod.status as { conditions?: Json[] } | undefined)?.conditions ?? []) as Json[];
    return conditions.find((condition) => condition.type === quotaConditionType);
  }

  function quotaHeldBefore(pod: Obj): boolean {
    return quotaCondition(pod)?.status === "True";
  }

  /** The quota condition on a tenant pod, with an event saying the same. */
  async function markQuota(session: TenantSession, pod: Obj, held: boolean, message: string): Promise<void> {
    const namespace = pod.metadata.namespace ?? "";
    const reason = held ? "QuotaExceeded" : "QuotaAvailable";
    await recordEvent(
      session.conn,
      { apiVersion: "v1", kind: "Pod", name: pod.metadata.name, namespace, uid: pod.metadata.uid },
      { type: held ? "Warning" : "Normal", reason, message },
      { component: syncerComponent, logger: log },
    );
    await patchPodStatus(
      session,
      namespace,
      pod.metadata.name,
      {
        conditions: [
          {
            type: quotaConditionType,
            status: held ? "True" : "False",
            reason,
            message,
            lastTransitionTime: new Date(ctx.clock.now()).toISOString(),
          },
        ],
      },
      true,
    );
  }

  /** A held pod: the QuotaExceeded event and condition, once per message. */
  async function reportQuotaHold(session: TenantSession, pod: Obj, message: string): Promise<void> {
    if (quotaCondition(pod)?.message === message) return;
    await markQuota(session, pod, true, message);
  }

  /** A held pod that went down: its condition and a Normal event say so. */
  function releaseQuotaHold(session: TenantSession, pod: Obj): Promise<void> {
    return markQuota(session, pod, false, "The tenant quota has room for this pod now; Ring0 started it.");
  }

  async function syncPod(session: TenantSession, namespace: string, name: string): Promise<void> {
    const { tenant } = session;
    const pod = session.caches.pod.get(namespace, name);
    const ref = podRef(superNamespace(tenant, namespace), name);
    let below = ctx.superPods()?.get(ref.metadata.namespace, name) as Obj | undefined;

    if (below && pod && below.metadata.annotations?.[syncAnnotations.uid] !== pod.metadata.uid) {
      // A tenant pod of the same name, an earlier incarnation below: it goes first.
      if (!below.metadata.deletionTimestamp)
        await deleteObject(ctx.superCluster, ref, { gracePeriodSeconds: 0 });
      return;
    }
    if (!pod) {
      if (below && !below.metadata.deletionTimestamp)
        await deleteObject(ctx.superCluster, ref, { gracePeriodSeconds: 0 });
      return;
    }
    if (pod.metadata.deletionTimestamp) {
      if (below) {
        if (!below.metadata.deletionTimestamp) {
          const grace = pod.metadata.deletionGracePeriodSeconds;
          await deleteObject(ctx.superCluster, ref, {
            gracePeriodSeconds: typeof grace === "number" ? grace : 0,
          });
        }
        return; // its deletion below brings the key back
      }
      // Gone below: finish the tenant's graceful deletion, as the kubelet would.
      if (nodeNameOf(pod)) await deleteTenantPod(session, pod);
      return;
    }

    if (!below && nodeNameOf(pod) && boundByRing0(pod)) {
      below = (await readOrNull<Obj>(ctx.superCluster, ref)) ?? undefined;
      if (!below) {
        if (isTerminal(pod)) return;
        const node = nodeNameOf(pod);
        const message = `The pod was removed from node ${node} of the shared cluster.`;
        await patchPodStatus(session, namespace, name, { phase: "Failed", reason: "Evicted", message });
        await recordEvent(
          session.conn,
          { apiVersion: "v1", kind: "Pod", name, namespace, uid: pod.metadata.uid },
          { type: "Warning", reason: "Evicted", message },
          { component: syncerComponent, logger: log },
        );
        return;
      }
    }
    if (!below) {
      if (isTerminal(pod)) return;
      // Check the pod as the tenant wrote it; a node Ring0 bound it to is Ring0's, not the tenant's.
      const checked = boundByRing0(pod) ? { ...pod, spec: { ...pod.spec, nodeName: undefined } } : pod;
      const violations = checkPodIsolation(checked as unknown as V1Pod, session.isolation);
      if (violations.length > 0) {
        await reportIsolation(session, pod, isolationMessage(violations));
        return;
      }
      const malformed = malformedReason("pod", pod);
      if (malformed) {
        await warnOnce(session, "pod", pod, "SyncRefused", malformed);
        return;
      }
      if (session.quota) {
        const decision = decideHold(session.quotaHold, {
          tenant,
          hard: session.quota,
          key: `${namespace}/${name}`,
          pod: pod as PodLike,
          pods: tenantPodsWithPlacement(session),
          now: new Date(ctx.clock.now()),
        });
        if (decision.hold) {
          await reportQuotaHold(session, pod, decision.message);
          return;
        }
      }
    }

    await ensureNamespace(session, namespace);
    const serviceAccount = (pod.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName;
    if (serviceAccount && serviceAccount !== "default") {
      await syncObject(session, "serviceaccount", namespace, serviceAccount);
    }
    const desired = withSyncHash(superObject(tenant, "pod", pod, session.placement, session.isolation));
    if (!below || syncHashOf(below) !== syncHashOf(desired)) {
      const written = below
        ? await updateBelow(session, pod, desired, below)
        : await createBelow(session, pod, desired);
      if (!written) return;
      below = written;
    }

    if (quotaHeldBefore(pod)) await releaseQuotaHold(session, pod);

    // Upward: the node, then the status exactly as the super cluster reports it.
    const node = nodeNameOf(below);
    if (node && !nodeNameOf(pod)) {
      await vNodes.ensure(session, node);
      await bindPod(session, namespace, name, node);
    }
    const patch = podStatusPatch(pod.status as Json | undefined, below.status as Json | undefined);
    if (patch) await patchPodStatus(session, namespace, name, patch);
  }

  /** A new pod's copy below, or undefined when the super cluster refused it (the tenant is told why). */
  async function createBelow(
    session: TenantSession,
    pod: Obj,
    desired: KubeObject,
  ): Promise<Obj | undefined> {
    try {
      return await serverSideApply<Obj>(ctx.superCluster, desired, { force: true });
    } catch (error) {
      session.quotaHold.admitting.delete(`${pod.metadata.namespace ?? ""}/${pod.metadata.name}`);
      if (!isRefusal(error)) throw error;
      await warnOnce(
        session,
        "pod",
        pod,
        "SyncRefused",
        `The super cluster refused the pod: ${error.message}`,
      );
      return undefined;
    }
  }

  /**
   * A running pod's copy brought up to date, or left as it is: a tenant's change is checked against
   * `runningPodPolicy` (its tolerations) first. A refused update is not the tenant's doing (its own API
   * server allows the same changes): Ring0 translates the pod differently since it was created
   * (after an upgrade), so the copy keeps running as it is and its status still goes up.
   */
  async function updateBelow(
    session: TenantSession,
    pod: Obj,
    desired: KubeObject,
    below: Obj,
  ): Promise<Obj> {
    const violations = checkPodIsolation(pod as unknown as V1Pod, runningPodPolicy(session.isolation));
    if (violations.length > 0) {
      await reportIsolation(session, pod, isolationMessage(violations));
      return below;
    }
    try {
      return await serverSideApply<Obj>(ctx.superCluster, desired, { force: true });
    } catch (error) {
      if (!isRefusal(error)) throw error;
      const id = `${session.tenant}|${pod.metadata.uid}|${syncHashOf(desired)}`;
      if (!keptAsIs.has(id)) {
        keptAsIs.add(id);
        if (keptAsIs.size > 10_000) keptAsIs.clear();
        log.warn("a pod below cannot take its new translation; it keeps running as it is", {
          tenant: session.tenant,
          namespace: pod.metadata.namespace,
          name: pod.metadata.name,
          error: error.message,
        });
      }
      return below;
    }
  }

  /** The super cluster refused the write for what the object is (not for being unreachable or busy). */
  function isRefusal(error: unknown): error is K8sError {
    return (
      error instanceof K8sError &&
      (error.reason === "Invalid" || error.reason === "BadRequest" || error.reason === "Forbidden") &&
      !isNamespaceTerminating(error)
    );
  }

  function isNamespaceTerminating(error: K8sError): boolean {
    return error.reason === "Forbidden" && /being terminated/.test(error.message);
  }

  async function bindPod(
    session: TenantSession,
    namespace: string,
    name: string,
    node: string,
  ): Promise<void> {
    try {
      await kubeRequest(session.conn, {
        method: "POST",
        path: podPath(namespace, name, "binding"),
        body: {
          apiVersion: "v1",
          kind: "Binding",
          metadata: { name, namespace, annotations: { [boundNodeAnnotation]: node } },
          target: { apiVersion: "v1", kind: "Node", name: node },
        },
        timeoutMs: 15_000,
      });
    } catch (error) {
      // Already bound (a retry after a lost answer) or gone: nothing to do.
      if (!isConflict(error) && !isNotFound(error)) throw error;
    }
  }

  async function syncEvent(session: TenantSession, namespace: string, name: string): Promise<void> {
    const superNs = superNamespace(session.tenant, namespace);
    const below = ctx.superEvents()?.get(superNs, name);
    if (!below) return;
    const involved = (below.involvedObject ?? {}) as { name?: string; uid?: string; fieldPath?: string };
    const pod = involved.name ? session.caches.pod.get(namespace, involved.name) : undefined;
    // Only events about the copy of this very tenant pod (not an earlier pod of the same name).
    const copy = involved.name ? ctx.superPods()?.get(superNs, involved.name) : undefined;
    if (!pod || !copy || copy.metadata.uid !== involved.uid) return;
    if (copy.metadata.annotations?.[syncAnnotations.uid] !== pod.metadata.uid) return;
    const translate = (text: unknown) =>
      typeof text === "string" ? text.split(`${superNs}/`).join(`${namespace}/`) : text;
    const event: KubeObject = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace, labels: { [syncLabels.managed]: "true" } },
      involvedObject: {
        apiVersion: "v1",
        kind: "Pod",
        name: pod.metadata.name,
        namespace,
        uid: pod.metadata.uid,
        ...(involved.fieldPath ? { fieldPath: involved.fieldPath } : {}),
      },
    };
    for (const field of [
      "reason",
      "type",
      "count",
      "firstTimestamp",
      "lastTimestamp",
      "source",
      "eventTime",
      "action",
      "reportingComponent",
      "reportingInstance",
      "series",
    ]) {
      if (below[field] !== undefined && below[field] !== null) event[field] = below[field];
    }
    event.message = translate(below.message);
    await serverSideApply(session.conn, event, { force: true });
  }

  return { syncObject, syncPod, syncEvent };
}
