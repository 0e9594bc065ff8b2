/**
 * A keyed cache over one list-watch that tells its owner about every change (the shared informers
 * in server/k8s deliver coalesced snapshots for views; the syncer needs each change as a key).
 */
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { K8sError } from "@/server/k8s/errors";
import { type ListWatchOptions, listAndWatch } from "@/server/k8s/watch";

export interface CachedObject {
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface WatchCache<T extends CachedObject> {
  get(namespace: string, name: string): T | undefined;
  values(): IterableIterator<T>;
  size(): number;
  isSynced(): boolean;
  synced(): Promise<void>;
  stop(): void;
}

/** `object` is the new state (the last known one when deleted); `previous` what the cache held before. */
export type CacheChange<T> = (object: T, previous: T | undefined, deleted: boolean) => void;

export function cacheKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}

export function createWatchCache<T extends CachedObject>(
  conn: ClusterConnection,
  options: ListWatchOptions,
  onChange: CacheChange<T>,
  onError?: (error: K8sError) => void,
): WatchCache<T> {
  const items = new Map<string, T>();
  let synced = false;
  let resolveSynced: () => void = () => {};
  const syncedPromise = new Promise<void>((resolve) => {
    resolveSynced = resolve;
  });
  const notify = (object: T, previous: T | undefined, deleted: boolean) => {
    try {
      onChange(object, previous, deleted);
    } catch {
      // A failing listener must not break the watch loop; the patroller catches what it missed.
    }
  };
  const watch = listAndWatch<T>(conn, options, {
    onSync(list) {
      const before = new Map(items);
      items.clear();
      for (const object of list)
        items.set(cacheKey(object.metadata?.namespace, object.metadata?.name), object);
      for (const [key, object] of items) notify(object, before.get(key), false);
      for (const [key, object] of before) if (!items.has(key)) notify(object, object, true);
      if (!synced) {
        synced = true;
        resolveSynced();
      }
    },
    onEvent(type, object) {
      const key = cacheKey(object.metadata?.namespace, object.metadata?.name);
      const previous = items.get(key);
      if (type === "DELETED") items.delete(key);
      else items.set(key, object);
      notify(object, previous, type === "DELETED");
    },
    onError,
  });
  return {
    get: (namespace, name) => items.get(cacheKey(namespace, name)),
    values: () => items.values(),
    size: () => items.size,
    isSynced: () => synced,
    synced: () => syncedPromise,
    stop: () => watch.stop(),
  };
}
