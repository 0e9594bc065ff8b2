/**
 * Shared, reference-counted informer caches: one list-watch per (cluster, path, label selector)
 * however many browser views, tRPC subscriptions or services read it. The registry lives on
 * globalThis so the custom server and Next's route handlers (separate module graphs) share it.
 */
import { processSlot } from "@/server/core/process-slots";
import type { ClusterConnection } from "./cluster";
import type { K8sError } from "./errors";
import {
  type ListWatch,
  type ListWatchOptions,
  listAndWatch,
  openWatchCount,
  type WatchHandlers,
} from "./watch";

export { openWatchCount };

export interface SharedInformer<T> {
  /** Listener gets the snapshot once synced (right away if already), then coalesced snapshots. */
  subscribe(listener: (items: T[]) => void): () => void;
  /** Current items, sorted by namespace/name; empty before the first sync. */
  snapshot(): T[];
  /** Resolves after the first successful list. */
  synced(): Promise<void>;
  /** The last list/watch error since the last successful sync, if any. */
  lastError(): K8sError | undefined;
}

export interface InformerResource {
  path: string;
  labelSelector?: string;
}

export interface InformerRegistryOptions {
  startWatch: <T>(
    conn: ClusterConnection,
    options: ListWatchOptions,
    handlers: WatchHandlers<T>,
  ) => ListWatch;
  /** Minimum gap between snapshots delivered to listeners. */
  coalesceMs?: number;
  /** How long a watch outlives its last subscriber (a page navigation re-subscribes quickly). */
  idleStopMs?: number;
}

interface KubeObjectLike {
  metadata?: { name?: string; namespace?: string; uid?: string };
}

function objectKey(object: unknown): string {
  const metadata = (object as KubeObjectLike | null)?.metadata;
  return `${metadata?.namespace ?? ""}/${metadata?.name ?? ""}`;
}

export interface InformerRegistry {
  sharedInformer<T>(conn: ClusterConnection, resource: InformerResource): SharedInformer<T>;
  /** Informers currently held (subscribed, or within their idle grace period). */
  size(): number;
}

export function createInformerRegistry(options: InformerRegistryOptions): InformerRegistry {
  const coalesceMs = options.coalesceMs ?? 100;
  const idleStopMs = options.idleStopMs ?? 5_000;
  const informers = new Map<string, SharedInformer<unknown>>();

  function create<T>(key: string, conn: ClusterConnection, resource: InformerResource): SharedInformer<T> {
    const items = new Map<string, T>();
    const listeners = new Set<(items: T[]) => void>();
    let isSynced = false;
    let error: K8sError | undefined;
    let resolveSynced: () => void = () => {};
    const syncedPromise = new Promise<void>((resolve) => {
      resolveSynced = resolve;
    });
    let lastEmit = Number.NEGATIVE_INFINITY;
    let emitTimer: ReturnType<typeof setTimeout> | undefined;
    let stopTimer: ReturnType<typeof setTimeout> | undefined;

    const snapshot = (): T[] =>
      [...items.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, value]) => value);

    const emit = () => {
      emitTimer = undefined;
      lastEmit = Date.now();
      const current = snapshot();
      for (const listener of [...listeners]) listener(current);
    };

    // At most one snapshot per coalesceMs: the first change after a quiet period goes out on the
    // next tick, a burst collapses into one delivery at the end of the window.
    const scheduleEmit = () => {
      if (!isSynced || emitTimer !== undefined || listeners.size === 0) return;
      const wait = Math.max(0, lastEmit + coalesceMs - Date.now());
      emitTimer = setTimeout(emit, wait);
    };

    const watch = options.startWatch<T>(
      conn,
      { path: resource.path, ...(resource.labelSelector ? { labelSelector: resource.labelSelector } : {}) },
      {
        onSync(list) {
          items.clear();
          for (const object of list) items.set(objectKey(object), object);
          error = undefined;
          if (!isSynced) {
            isSynced = true;
            resolveSynced();
          }
          scheduleEmit();
        },
        onEvent(type, object) {
          if (type === "DELETED") items.delete(objectKey(object));
          else items.set(objectKey(object), object);
          scheduleEmit();
        },
        onError(failure) {
          error = failure;
        },
      },
    );

    const scheduleStop = () => {
      if (stopTimer !== undefined) clearTimeout(stopTimer);
      stopTimer = setTimeout(() => {
        if (listeners.size > 0) return;
        if (emitTimer !== undefined) clearTimeout(emitTimer);
        watch.stop();
        if (informers.get(key) === informer) informers.delete(key);
      }, idleStopMs);
      stopTimer.unref?.();
    };

    const informer: SharedInformer<T> = {
      subscribe(listener) {
        if (stopTimer !== undefined) {
          clearTimeout(stopTimer);
          stopTimer = undefined;
        }
        listeners.add(listener);
        // Before the first sync, the sync's own delivery reaches every listener subscribed by then.
        if (isSynced) {
          queueMicrotask(() => {
            if (listeners.has(listener)) listener(snapshot());
          });
        }
        return () => {
          if (!listeners.delete(listener)) return;
          if (listeners.size === 0) scheduleStop();
        };
      },
      snapshot,
      synced: () => syncedPromise,
      lastError: () => error,
    };
    // Created but never subscribed: do not leak the watch.
    scheduleStop();
    return informer;
  }

  return {
    sharedInformer<T>(conn: ClusterConnection, resource: InformerResource): SharedInformer<T> {
      const key = JSON.stringify([conn.name, conn.server, resource.path, resource.labelSelector ?? ""]);
      let informer = informers.get(key) as SharedInformer<T> | undefined;
      if (!informer) {
        informer = create<T>(key, conn, resource);
        informers.set(key, informer as SharedInformer<unknown>);
      }
      return informer;
    },
    size: () => informers.size,
  };
}

const registry = processSlot<InformerRegistry>("k8s.informers");

function defaultRegistry(): InformerRegistry {
  return registry.ensure(() => createInformerRegistry({ startWatch: listAndWatch }));
}

/** The process-wide shared informer for `resource` on `conn` (same instance while it is in use). */
export function sharedInformer<T>(conn: ClusterConnection, resource: InformerResource): SharedInformer<T> {
  return defaultRegistry().sharedInformer<T>(conn, resource);
}
