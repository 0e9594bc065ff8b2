/**
 * Reconciling one key of a tenant: copy an object down (or delete its copy), a pod down and its
 * status, node and events up. Reads come from the caches; writes are idempotent (server-side
 * apply as "ring0" with a hash annotation, so an unchanged object is not written again).
 *
 * One reconciler per kind of key: objects (reconcile-objects.ts), pods (reconcile-pods.ts) and
 * events (reconcile-events.ts), sharing one record of the refusals already warned about.
 */
import { createIdentitySecrets, type IdentitySecrets } from "./identity-secrets";
import { syncEvent } from "./reconcile-events";
import { createObjectReconciler } from "./reconcile-objects";
import { createPodReconciler } from "./reconcile-pods";
import { createRefusalWarnings } from "./refusal-warnings";
import type { SyncContext, TenantSession } from "./session";
import type { SyncedKind } from "./synced-kinds";
import type { VNodes } from "./vnodes";

export interface Reconcilers {
  /** Namespaces, config maps, secrets, service accounts, services and endpoints. */
  syncObject(session: TenantSession, kind: SyncedKind, namespace: string, name: string): Promise<void>;
  syncPod(session: TenantSession, namespace: string, name: string): Promise<void>;
  /** Copy an event about a synced pod up into the tenant namespace. */
  syncEvent(session: TenantSession, namespace: string, name: string): Promise<void>;
  /** Pods' identity secrets below (their tokens' renewal is driven from the syncer's timer). */
  identities: IdentitySecrets;
}

export function createReconcilers(ctx: SyncContext, vNodes: VNodes): Reconcilers {
  const warnOnce = createRefusalWarnings(ctx);
  const objects = createObjectReconciler(ctx, warnOnce);
  const identities = createIdentitySecrets(ctx);
  return {
    identities,
    syncObject: objects.syncObject,
    syncPod: createPodReconciler(ctx, vNodes, objects, warnOnce, identities),
    syncEvent: (session, namespace, name) => syncEvent(ctx, session, namespace, name),
  };
}
