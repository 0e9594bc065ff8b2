/**
 * Reconciling one namespace, config map, secret, service account, service or endpoints of a tenant:
 * copy it down (its super namespace first), or delete the syncer's copy once the tenant's is gone.
 * A new namespace gets the tenant's default share; a service gets its load balancer back up.
 */
import { deleteObject, serverSideApply } from "@/server/k8s/apply";
import { isNotFound, K8sError } from "@/server/k8s/errors";
import { ServiceKind } from "@/server/k8s/kinds/core";
import { groupVersionPath } from "@/server/k8s/kinds/kind";
import { kubeRequest } from "@/server/k8s/transport";
import { ensureDefaultShare, isNewNamespace } from "@/server/quotas/default-share";
import { boundVolumeOf, claimRefusal, isBoundInTenant, tenantVolume } from "./claims";
import { syncLabels } from "./contracts";
import { superNamespace } from "./naming";
import { boundaryPolicies } from "./network-policies";
import type { WarnOnce } from "./refusal-warnings";
import { type Obj, readOrNull, type SyncContext, type TenantSession } from "./session";
import { isSynced, type Json, kindInfo, malformedReason, type SyncedKind } from "./synced-kinds";
import { superObject, syncHashOf, withSyncHash, writtenBySyncer } from "./translate";
import { serviceStatusPatch } from "./upward-status";

export interface ObjectReconciler {
  /** Namespaces, config maps, secrets, service accounts, services and endpoints: copy down or delete below. */
  syncObject(session: TenantSession, kind: SyncedKind, namespace: string, name: string): Promise<void>;
  /** The tenant namespace's super namespace, applied once per session (before anything goes into it). */
  ensureNamespace(session: TenantSession, namespace: string): Promise<void>;
}

/** A synced kind's object path below. */
function objectPath(kind: SyncedKind, namespace: string | undefined, name: string): string {
  const info = kindInfo[kind];
  const scope = info.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `${groupVersionPath(info.apiVersion)}${scope}/${info.resource}/${encodeURIComponent(name)}`;
}

export function createObjectReconciler(ctx: SyncContext, warnOnce: WarnOnce): ObjectReconciler {
  const { log } = ctx;

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

  /**
   * Before any pod of the tenant runs there, where no host wall keeps tenants apart: Ring0's policies
   * in the namespace below (network-policies.ts), the floor first; each written only when it is not
   * what Ring0 would write (so restoring one that was changed below is this same call).
   */
  async function ensureBoundary(session: TenantSession, namespace: string, below: string): Promise<void> {
    const boundary = ctx.boundaryOf(session.tenant);
    if (!boundary) return;
    const policies = boundaryPolicies({
      tenant: session.tenant,
      superNamespace: below,
      tenantNamespace: namespace,
      boundary,
    });
    for (const policy of policies) {
      const desired = withSyncHash(policy as Obj);
      const name = desired.metadata.name;
      if (syncHashOf(ctx.superBoundaries()?.get(below, name)) === syncHashOf(desired)) continue;
      // As written: client-node's typed model would drop `from`.
      await serverSideApply(ctx.superCluster, desired, {
        force: true,
        path: `/apis/networking.k8s.io/v1/namespaces/${encodeURIComponent(below)}/networkpolicies/${encodeURIComponent(name)}`,
      });
    }
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
    await ensureBoundary(session, namespace, desired.metadata.name);
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
      const current = await readOrNull<Obj>(ctx.superCluster, ref);
      if (current && writtenBySyncer(kind, current, tenant) && !current.metadata.deletionTimestamp) {
        await deleteObject(ctx.superCluster, ref);
        if (kind === "namespace") session.namespaces.delete(name);
      }
      if (kind === "persistentvolumeclaim") await removeTenantVolume(session, object, current);
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
    if (kind === "persistentvolumeclaim") {
      const refusal = claimRefusal(object, session.isolation);
      if (refusal) {
        await warnOnce(session, kind, object, "SyncRefused", refusal);
        return;
      }
    }
    await ensureNamespace(session, namespace);
    const desired = withSyncHash(
      superObject(tenant, kind, object, {}, session.isolation, ctx.boundaryOf(tenant)),
    );
    const current = await readOrNull<Obj>(ctx.superCluster, ref);
    if (current && syncHashOf(current) === syncHashOf(desired)) {
      if (kind === "service") await copyServiceStatus(session, object, current);
      if (kind === "persistentvolumeclaim") await bindUp(session, object, current);
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
    // Sent as written: client-node's typed models drop fields they rename (NetworkPolicy's `from`).
    const apply = (body: Obj) =>
      serverSideApply<Obj>(ctx.superCluster, body, {
        force: true,
        path: objectPath(kind, ref.metadata.namespace, ref.metadata.name),
      });
    try {
      if (kind === "service") {
        await syncService(session, object, desired as Obj, current, apply);
        return;
      }
      const written = await apply(desired as Obj);
      if (kind === "persistentvolumeclaim") await bindUp(session, object, written);
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

  /**
   * A service's copy: it asks for the tenant's cluster IP (translate.ts), keeps the one it has (a
   * cluster IP never changes), and when the tenant's is taken below lets the super cluster give
   * another (the hash stays the desired one's, so it is not asked again) and tells the tenant which
   * address its DNS name answers. Then the load balancer goes up.
   */
  async function syncService(
    session: TenantSession,
    service: Obj,
    desired: Obj,
    current: Obj | null,
    apply: (body: Obj) => Promise<Obj>,
  ): Promise<void> {
    const asked = (desired.spec as Json | undefined)?.clusterIP;
    const withAddress = (address: unknown) => {
      const spec = { ...(desired.spec as Json) };
      if (address === undefined) delete spec.clusterIP;
      else spec.clusterIP = address;
      return { ...desired, spec } as Obj;
    };
    const held = (current?.spec as Json | undefined)?.clusterIP;
    let written: Obj;
    if (held !== undefined) {
      written = await apply(withAddress(held));
    } else {
      try {
        written = await apply(desired);
      } catch (error) {
        if (
          !(
            typeof asked === "string" &&
            asked !== "None" &&
            error instanceof K8sError &&
            error.reason === "Invalid"
          )
        )
          throw error;
        written = await apply(withAddress(undefined));
      }
    }
    const given = (written.spec as Json | undefined)?.clusterIP;
    if (typeof asked === "string" && asked !== "None" && given !== asked) {
      const name = service.metadata.name;
      await warnOnce(
        session,
        "service",
        service,
        "ClusterIPDiffers",
        `${asked} is taken in the shared cluster, so Service ${name} has ${String(given)} there; its DNS name (${name}.${service.metadata.namespace}.svc.cluster.local) answers ${String(given)}.`,
      );
    }
    await copyServiceStatus(session, service, written);
  }

  /** Upward: the load balancer the super cluster reports for the service's copy. */
  async function copyServiceStatus(session: TenantSession, service: Obj, below: Obj): Promise<void> {
    const patch = serviceStatusPatch(service.status as Json | undefined, below.status as Json | undefined);
    if (!patch) return;
    const namespace = service.metadata.namespace ?? "";
    try {
      await kubeRequest(session.conn, {
        method: "PATCH",
        path: ServiceKind.path({ namespace, name: service.metadata.name, subresource: "status" }),
        contentType: "application/merge-patch+json",
        body: { status: patch },
        timeoutMs: 15_000,
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /**
   * Upward: once the claim's copy is bound below, the tenant gets a volume of the same name
   * pre-bound to its claim, and its own controller binds the claim to it (claims.ts).
   */
  async function bindUp(session: TenantSession, claim: Obj, below: Obj): Promise<void> {
    const volume = boundVolumeOf(below);
    if (!volume || isBoundInTenant(claim, volume)) return;
    const superVolume = await readOrNull<Obj>(ctx.superCluster, {
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name: volume },
    });
    if (!superVolume) return;
    await serverSideApply(session.conn, tenantVolume(claim, superVolume), { force: true });
  }

  /** The volume the syncer put up for a claim that is going (named by the claim or its copy below). */
  async function removeTenantVolume(session: TenantSession, claim: Obj | undefined, below: Obj | null) {
    const volume = [claim?.spec?.volumeName, below?.spec?.volumeName].find(
      (name): name is string => typeof name === "string" && name !== "",
    );
    if (!volume) return;
    const ref = { apiVersion: "v1", kind: "PersistentVolume", metadata: { name: volume } };
    const current = await readOrNull<Obj>(session.conn, ref);
    if (current?.metadata.labels?.[syncLabels.managed] !== "true") return;
    await deleteObject(session.conn, ref).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }

  return { syncObject, ensureNamespace };
}
