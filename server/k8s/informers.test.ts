import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ClusterConnection } from "./cluster";
import { createInformerRegistry } from "./informers";
import type { ListWatchOptions, WatchHandlers } from "./watch";

interface Item {
  metadata: { name: string };
  value?: number;
}

const conn = { name: "super", server: "https://127.0.0.1:1" } as ClusterConnection;
const named = (name: string, value?: number): Item => ({
  metadata: { name },
  ...(value === undefined ? {} : { value }),
});

function fakeWatches() {
  const started: { options: ListWatchOptions; handlers: WatchHandlers<Item>; stopped: boolean }[] = [];
  const registry = createInformerRegistry({
    coalesceMs: 100,
    idleStopMs: 5_000,
    startWatch: <T>(_conn: ClusterConnection, options: ListWatchOptions, handlers: WatchHandlers<T>) => {
      const entry = { options, handlers: handlers as unknown as WatchHandlers<Item>, stopped: false };
      started.push(entry);
      return {
        stop: () => {
          entry.stopped = true;
        },
        resourceVersion: () => "",
      };
    },
  });
  const open = () => started.filter((w) => !w.stopped).length;
  return { registry, started, open };
}

const names = (items: Item[]) =>
  items.map((i) => `${i.metadata.name}${i.value === undefined ? "" : `=${i.value}`}`);

describe("shared informers", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("returns one instance and one watch per (cluster, path, selector)", () => {
    const { registry, started } = fakeWatches();
    const a = registry.sharedInformer<Item>(conn, { path: "/api/v1/nodes" });
    const b = registry.sharedInformer<Item>(conn, { path: "/api/v1/nodes" });
    const c = registry.sharedInformer<Item>(conn, { path: "/api/v1/nodes", labelSelector: "zone=a" });
    const d = registry.sharedInformer<Item>({ ...conn, name: "tenant-a" }, { path: "/api/v1/nodes" });
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    expect(d).not.toBe(a);
    expect(started.map((w) => w.options)).toEqual([
      { path: "/api/v1/nodes" },
      { path: "/api/v1/nodes", labelSelector: "zone=a" },
      { path: "/api/v1/nodes" },
    ]);
  });

  it("delivers the synced snapshot, then coalesced snapshots at most once per 100 ms", async () => {
    const { registry, started } = fakeWatches();
    const informer = registry.sharedInformer<Item>(conn, { path: "/p" });
    const seen: string[][] = [];
    informer.subscribe((items) => seen.push(names(items)));
    const watch = started[0]!;
    watch.handlers.onSync([named("b"), named("a")], "1");
    await informer.synced();
    await vi.advanceTimersByTimeAsync(0);
    expect(seen).toEqual([["a", "b"]]);

    watch.handlers.onEvent("ADDED", named("c"));
    watch.handlers.onEvent("MODIFIED", named("a", 2));
    watch.handlers.onEvent("DELETED", named("b"));
    await vi.advanceTimersByTimeAsync(50);
    expect(seen).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(50);
    expect(seen).toEqual([
      ["a", "b"],
      ["a=2", "c"],
    ]);

    // A late subscriber gets the current snapshot right away.
    const late: string[][] = [];
    informer.subscribe((items) => late.push(names(items)));
    await vi.advanceTimersByTimeAsync(0);
    expect(late).toEqual([["a=2", "c"]]);
    expect(informer.snapshot().map((i) => i.metadata.name)).toEqual(["a", "c"]);
  });

  it("stops the watch some seconds after the last unsubscribe, unless someone comes back", async () => {
    const { registry, started, open } = fakeWatches();
    const informer = registry.sharedInformer<Item>(conn, { path: "/p" });
    const first = informer.subscribe(() => {});
    const second = informer.subscribe(() => {});
    first();
    second();
    await vi.advanceTimersByTimeAsync(4_000);
    expect(open()).toBe(1);
    // Re-subscribing inside the grace period keeps the same watch.
    const again = registry.sharedInformer<Item>(conn, { path: "/p" });
    expect(again).toBe(informer);
    const third = again.subscribe(() => {});
    await vi.advanceTimersByTimeAsync(10_000);
    expect(open()).toBe(1);
    third();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(open()).toBe(0);
    expect(registry.size()).toBe(0);
    // A new request after the stop starts a fresh watch.
    expect(registry.sharedInformer<Item>(conn, { path: "/p" })).not.toBe(informer);
    expect(started).toHaveLength(2);
  });

  it("does not leak a watch for an informer nobody subscribes to", async () => {
    const { registry, open } = fakeWatches();
    registry.sharedInformer<Item>(conn, { path: "/p" });
    expect(open()).toBe(1);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(open()).toBe(0);
  });

  it("keeps a relist's snapshot and remembers the last error until the next sync", async () => {
    const { registry, started } = fakeWatches();
    const informer = registry.sharedInformer<Item>(conn, { path: "/p" });
    const seen: string[][] = [];
    informer.subscribe((items) => seen.push(names(items)));
    const watch = started[0]!;
    watch.handlers.onSync([named("a")], "1");
    await vi.advanceTimersByTimeAsync(0);
    watch.handlers.onError?.({ status: 0, reason: "Unreachable" } as never);
    expect(informer.lastError()?.reason).toBe("Unreachable");
    watch.handlers.onSync([named("z")], "9");
    await vi.advanceTimersByTimeAsync(100);
    expect(seen).toEqual([["a"], ["z"]]);
    expect(informer.lastError()).toBeUndefined();
  });
});
