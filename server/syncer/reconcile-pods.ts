/**
 * Reconciling one pod of a tenant. Down: checked by the isolation filter and held against the
 * tenant quota before it first goes below, then applied (its service account first). Up: the vNode,
 * the binding to the node the super scheduler chose, then the status exactly as reported below.
 *
 * A pod deleted or evicted below after it was bound turns Failed with reason Evicted in the tenant
 * (a kubelet does the same with an evicted pod): its node is fixed once bound, so the tenant's
 * controllers replace it rather than the syncer resurrecting it elsewhere. A pod the tenant
 * deletes is deleted below first; then the syncer finishes the tenant's graceful deletion, as the
 * kubelet would.
 */
import { deleteObject, type KubeObject, serverSideApply } from "@/server/k8s/apply";
import { K8sError } from "@/server/k8s/errors";
import { recordEvent } from "@/server/k8s/events";
import type { V1Pod } from "@/server/k8s/kinds/node";
import { kubeRequest } from "@/server/k8s/transport";
import { type PodLike, refusalMessage } from "@/server/quotas/usage";
import { syncAnnotations } from "./contracts";
import { checkPodIsolation } from "./filter";
import type { IdentitySecrets } from "./identity-secrets";
import { runningPodPolicy } from "./isolation-policy";
import { superNamespace } from "./naming";
import {
  isolationMessage,
  quotaHeldBefore,
  releaseQuotaHold,
  reportIsolation,
  reportQuotaHold,
} from "./pod-conditions";
import { identityRefusal } from "./pod-identity";
import { decideHold } from "./quota-hold";
import type { ObjectReconciler } from "./reconcile-objects";
import type { WarnOnce } from "./refusal-warnings";
import {
  boundByRing0,
  isTerminal,
  nodeNameOf,
  type Obj,
  podPlacement,
  readOrNull,
  type SyncContext,
  syncerComponent,
  type TenantSession,
} from "./session";
import { resizePatch, superEphemeralContainers, withImmutableOfRunning } from "./super-pod-spec";
import { type Json, malformedReason } from "./synced-kinds";
import { bindPod, deleteTenantPod, patchPodStatus } from "./tenant-pod-writes";
import { superObject, syncHashOf, withSyncHash } from "./translate";
import { podStatusPatch, tenantPodStatus } from "./upward-status";
import type { VNodes } from "./vnodes";

function podRef(namespace: string, name: string) {
  return { apiVersion: "v1", kind: "Pod", metadata: { name, namespace } };
}

/** Every tenant pod, and whether it is synced below (same UID). */
function* tenantPodsWithPlacement(ctx: SyncContext, session: TenantSession) {
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

export function createPodReconciler(
  ctx: SyncContext,
  vNodes: VNodes,
  objects: ObjectReconciler,
  warnOnce: WarnOnce,
  identities: IdentitySecrets,
): (session: TenantSession, namespace: string, name: string) => Promise<void> {
  const { log } = ctx;
  /** Pods below whose update the super cluster refused (tenant|uid|hash), logged once each. */
  const keptAsIs = new Set<string>();

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
      identities.forget(session, below?.metadata.annotations?.[syncAnnotations.uid]);
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
        await reportIsolation(ctx, session, pod, isolationMessage(violations));
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
          pods: tenantPodsWithPlacement(ctx, session),
          now: new Date(ctx.clock.now()),
        });
        if (decision.hold) {
          await reportQuotaHold(ctx, session, pod, decision.message);
          return;
        }
      }
    }

    await objects.ensureNamespace(session, namespace);
    const serviceAccount = (pod.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName;
    if (serviceAccount && serviceAccount !== "default") {
      await objects.syncObject(session, "serviceaccount", namespace, serviceAccount);
    }
    const translated = superObject(tenant, "pod", pod, podPlacement(ctx, session, pod), session.isolation);
    if (below)
      translated.spec = withImmutableOfRunning((translated.spec ?? {}) as Json, (below.spec ?? {}) as Json);
    const desired = withSyncHash(translated);
    // Ring0's conditions this sync still stands by (a change to the running pod it refused).
    const held: Json[] = [];
    if (!below || syncHashOf(below) !== syncHashOf(desired)) {
      const written = below
        ? await updateBelow(session, pod, desired, below, held)
        : await createBelow(session, pod, desired);
      if (!written) return;
      below = written;
    }

    if (quotaHeldBefore(pod)) await releaseQuotaHold(ctx, session, pod);
    below = await addEphemeralContainers(session, pod, below, held);

    // Upward: the node, then the pod's tokens (they name the node, as a kubelet's do; the kubelet
    // below retries the mount until they are there), then the status as the super cluster reports it.
    const node = nodeNameOf(below);
    if (node && !nodeNameOf(pod)) {
      await vNodes.ensure(session, node);
      await bindPod(session, namespace, name, node);
    }
    if (node) {
      const identity = await identities.ensure(session, pod, below);
      // The pod waits for its tokens (a running one keeps its last ones); its status still goes up.
      if (!identity.ok) await warnOnce(session, "pod", pod, "SyncRefused", identity.message);
    }
    const patch = podStatusPatch(
      pod.status as Json | undefined,
      tenantPodStatus(below.status as Json | undefined, {
        superGeneration: (below.metadata as { generation?: unknown }).generation,
        tenantGeneration: below.metadata.annotations?.[syncAnnotations.generation],
      }),
      held,
    );
    if (patch) await patchPodStatus(session, namespace, name, patch);
  }

  /**
   * The ephemeral containers the tenant added (`kubectl debug`), added below through the
   * pods/ephemeralcontainers subresource, once each: they are checked as a new pod's containers
   * are, since each is a new process on the shared node. Resolves with the copy as it is now.
   */
  async function addEphemeralContainers(
    session: TenantSession,
    pod: Obj,
    below: Obj,
    held: Json[],
  ): Promise<Obj> {
    const wanted = superEphemeralContainers((pod.spec ?? {}) as Json, session.placement, pod.metadata.uid);
    const present = new Set(
      (((below.spec as Json | undefined)?.ephemeralContainers as Json[] | undefined) ?? []).map(
        (container) => container.name,
      ),
    );
    const missing = wanted.filter((container) => !present.has(container.name));
    // Nothing to add, or the pod's other changes are refused already (one refusal at a time).
    if (missing.length === 0 || held.length > 0) return below;
    const checked = boundByRing0(pod) ? { ...pod, spec: { ...pod.spec, nodeName: undefined } } : pod;
    const violations = checkPodIsolation(checked as unknown as V1Pod, session.isolation);
    if (violations.length > 0) {
      held.push(await reportIsolation(ctx, session, pod, isolationMessage(violations)));
      return below;
    }
    // Nor may they read another pod's identity secret below (checked at creation for the others).
    const refusal = identityRefusal((pod.spec ?? {}) as Json);
    if (refusal) {
      await warnOnce(session, "pod", pod, "SyncRefused", refusal);
      return below;
    }
    try {
      return await patchBelow(below, "ephemeralcontainers", { spec: { ephemeralContainers: missing } });
    } catch (error) {
      if (!isRefusal(error)) throw error;
      await tellRefused(session, pod, "the pod's ephemeral containers", error);
      return below;
    }
  }

  /** A strategic merge patch of a pod's subresource below (ephemeral containers, resize). */
  function patchBelow(below: Obj, subresource: string, body: Json): Promise<Obj> {
    return kubeRequest<Obj>(ctx.superCluster, {
      method: "PATCH",
      path: `/api/v1/namespaces/${below.metadata.namespace}/pods/${below.metadata.name}/${subresource}`,
      contentType: "application/strategic-merge-patch+json",
      body,
      timeoutMs: 15_000,
    });
  }

  /** The tenant is told, once, what the super cluster refused and why. */
  function tellRefused(session: TenantSession, pod: Obj, what: string, error: K8sError): Promise<void> {
    return warnOnce(
      session,
      "pod",
      pod,
      "SyncRefused",
      `The super cluster refused ${what}: ${error.message}`,
    );
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
      await tellRefused(session, pod, "the pod", error);
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
    held: Json[],
  ): Promise<Obj> {
    const violations = checkPodIsolation(pod as unknown as V1Pod, runningPodPolicy(session.isolation));
    if (violations.length > 0) {
      held.push(await reportIsolation(ctx, session, pod, isolationMessage(violations)));
      return below;
    }
    // Resources change only through pods/resize (in-place resize): that first, then the rest. A
    // resize is held to the tenant quota as a new pod is (the webhook refuses it at admission; this
    // catches one that got in without it), and the copy keeps its size until there is room.
    const resize = resizePatch((desired.spec ?? {}) as Json, (below.spec ?? {}) as Json);
    if (resize && session.quota) {
      const decision = decideHold(session.quotaHold, {
        tenant: session.tenant,
        hard: session.quota,
        key: `${pod.metadata.namespace ?? ""}/${pod.metadata.name}`,
        pod: pod as PodLike,
        pods: tenantPodsWithPlacement(ctx, session),
        now: new Date(ctx.clock.now()),
      });
      if (decision.hold) {
        const message = `${refusalMessage(session.tenant, decision.exceeded)}. Ring0 keeps the running pod at its size until there is room or the quota is raised.`;
        held.push(await reportQuotaHold(ctx, session, pod, message));
        return below;
      }
    }
    try {
      if (resize) await patchBelow(below, "resize", resize);
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

  return syncPod;
}
