/**
 * The skeleton every custom-resource reconciler shares (controller-runtime's client and event
 * recorder, for one kind): read the object fresh, add and drop the kind's finalizer with merge
 * patches guarded by resourceVersion, record Events about it, and rebuild its status with a
 * conflict-retrying write that is skipped when nothing changed. What a reconciler decides stays
 * its own; only this I/O is shared, so the tenant and sharing reconcilers cannot drift apart.
 */
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isConflict, isNotFound } from "@/server/k8s/errors";
import { type EventTarget, type RecordedEvent, recordEvent } from "@/server/k8s/events";
import { kubeRequest } from "@/server/k8s/transport";
import type { Logger } from "@/server/logger";
import { NotYetError } from "./controller";
import {
  clusterStatusStore,
  type ResourceRef,
  resourcePath,
  type StatusStore,
  updateStatusWithRetry,
} from "./status";

/** One cluster-scoped custom resource kind, as its reconciler handles it. */
export interface CustomResourceKind {
  /** "group/version", e.g. "ring0.dev/v1alpha1". */
  apiVersion: string;
  kind: string;
  /** The plural resource name, e.g. "tenants". */
  plural: string;
  /** The finalizer that holds a deleted object until the reconciler has cleaned up after it. */
  finalizer: string;
  /** The Events' source component, e.g. "ring0-tenant-controller". */
  component: string;
  /**
   * When set, a metadata patch that lost a race (409: someone changed the object meanwhile) is a
   * quiet immediate requeue with this reason, and the next run decides from the newer object.
   * When not, the Conflict is an error like any other, retried with backoff.
   */
  requeueOnConflict?: string;
}

/** The fields of an object the skeleton reads. */
export interface CustomResourceObject<S> {
  metadata: {
    name: string;
    uid?: string;
    resourceVersion?: string;
    finalizers?: string[];
    [key: string]: unknown;
  };
  status?: S;
}

/** Where the skeleton reads and writes: the super cluster in production, a fake in unit tests. */
export interface CustomResourceStore extends StatusStore {
  /** The object, or null when there is none. */
  get<T>(ref: ResourceRef): Promise<T | null>;
  /** A JSON merge patch of the object; a stale metadata.resourceVersion in it is a 409 Conflict. */
  mergePatch<T>(ref: ResourceRef, patch: object): Promise<T>;
  /** Best effort: a failure is logged, never thrown. */
  recordEvent(target: EventTarget, event: RecordedEvent): Promise<void>;
}

export function clusterCustomResourceStore(
  conn: ClusterConnection,
  options: { component: string; logger?: Logger },
): CustomResourceStore {
  return {
    ...clusterStatusStore(conn),
    async get<T>(ref: ResourceRef): Promise<T | null> {
      try {
        return await kubeRequest<T>(conn, { path: resourcePath(ref), timeoutMs: 15_000 });
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },
    mergePatch: <T>(ref: ResourceRef, patch: object) =>
      kubeRequest<T>(conn, {
        method: "PATCH",
        path: resourcePath(ref),
        contentType: "application/merge-patch+json",
        body: patch,
        timeoutMs: 15_000,
      }),
    recordEvent: (target, event) =>
      recordEvent(conn, target, event, { component: options.component, logger: options.logger }),
  };
}

/** A status write's outcome: the status before (as read fresh for the write) and as stored after. */
export interface StatusChange<S> {
  previous: S;
  status: S;
}

export interface CustomResource<T extends CustomResourceObject<S>, S extends object> {
  readonly kind: CustomResourceKind;
  /** The object fresh from the API server, or null when it is gone. */
  read(name: string): Promise<T | null>;
  /** Merge patch of metadata, guarded by the object's resourceVersion. */
  patchMetadata(object: T, metadata: Record<string, unknown>): Promise<T>;
  hasFinalizer(object: T): boolean;
  /** Adds the kind's finalizer (the caller checked it was missing); resolves the patched object. */
  addFinalizer(object: T): Promise<T>;
  /**
   * Drops the kind's finalizer from a fresh read, once cleanup is done; resolves whether it was
   * dropped (false: the object is gone, or holds no such finalizer any more).
   */
  removeFinalizer(name: string): Promise<boolean>;
  event(object: T, type: RecordedEvent["type"], reason: string, message: string): Promise<void>;
  /**
   * Rebuilds the status from a fresh read with `build` (pure: previous status in, new status out),
   * retrying on Conflict; nothing is written when the status would not change.
   */
  writeStatus(name: string, build: (previous: S) => S): Promise<StatusChange<S>>;
}

export function createCustomResource<T extends CustomResourceObject<S>, S extends object>(
  kind: CustomResourceKind,
  store: CustomResourceStore,
): CustomResource<T, S> {
  const ref = (name: string): ResourceRef => ({ apiVersion: kind.apiVersion, resource: kind.plural, name });

  async function patchMetadata(object: T, metadata: Record<string, unknown>): Promise<T> {
    try {
      return await store.mergePatch<T>(ref(object.metadata.name), {
        metadata: { ...metadata, resourceVersion: object.metadata.resourceVersion },
      });
    } catch (error) {
      if (kind.requeueOnConflict !== undefined && isConflict(error)) {
        throw new NotYetError(kind.requeueOnConflict, 0);
      }
      throw error;
    }
  }

  const hasFinalizer = (object: T) => object.metadata.finalizers?.includes(kind.finalizer) ?? false;

  return {
    kind,
    read: (name) => store.get<T>(ref(name)),
    patchMetadata,
    hasFinalizer,
    addFinalizer: (object) =>
      patchMetadata(object, { finalizers: [...(object.metadata.finalizers ?? []), kind.finalizer] }),
    async removeFinalizer(name) {
      const fresh = await store.get<T>(ref(name));
      if (!fresh || !hasFinalizer(fresh)) return false;
      await patchMetadata(fresh, {
        finalizers: (fresh.metadata.finalizers ?? []).filter((finalizer) => finalizer !== kind.finalizer),
      });
      return true;
    },
    event: (object, type, reason, message) =>
      store.recordEvent(
        {
          apiVersion: kind.apiVersion,
          kind: kind.kind,
          name: object.metadata.name,
          uid: object.metadata.uid,
        },
        { type, reason, message },
      ),
    async writeStatus(name, build) {
      let previous = {} as S;
      const written = await updateStatusWithRetry<S>(store, ref(name), (status) => {
        previous = structuredClone(status);
        return build(status);
      });
      return { previous, status: (written.status ?? {}) as S };
    },
  };
}
