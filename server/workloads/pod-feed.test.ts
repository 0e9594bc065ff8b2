import { describe, expect, it } from "vitest";
import { errorFromResponse } from "@/server/k8s/errors";
import type { RawWatchEvent, WatchTransport } from "@/server/k8s/watch";
import { watchPods } from "./pod-feed";
import type { PodList } from "./pods";

const acting = {
  user: { subject: "acme:alice", role: "tenant-admin" as const, tenant: "acme" },
  tenant: "acme",
};

const pod = (namespace: string, name: string, resourceVersion: string) => ({
  metadata: { namespace, name, resourceVersion, creationTimestamp: "2026-01-01T00:00:00Z" },
  spec: { containers: [{ name: "app" }] },
  status: { phase: "Pending" },
});

const forbidden = (what: string) =>
  errorFromResponse(403, {
    kind: "Status",
    code: 403,
    reason: "Forbidden",
    message: `${what} is forbidden: User "acme:alice" cannot list resource "${what}"`,
  });

type List = () => Promise<{ items: unknown[]; resourceVersion: string }>;
type Watch = (emit: (event: RawWatchEvent) => void) => Promise<void>;

/** Scripted per path; a path's watch without a script stays open (quiet) until stopped. */
function fakeTransport(lists: Record<string, List[]>, watches: Record<string, Watch[]> = {}) {
  const calls: string[] = [];
  const transport: WatchTransport = {
    async list(path) {
      calls.push(`list ${path}`);
      const next = lists[path]?.shift();
      if (!next) throw new Error(`unexpected list of ${path}`);
      return next();
    },
    async watch(path, _query, onEvent, signal) {
      calls.push(`watch ${path}`);
      const next = watches[path]?.shift();
      if (next) return next(onEvent);
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    },
  };
  return { transport, calls };
}

const names = (list: PodList | undefined) =>
  list?.state === "serving" ? list.pods.map((row) => `${row.namespace}/${row.name}`) : list;

const immediately = { coalesceMs: 0, sleep: async () => {} };

describe("watchPods", () => {
  it("relists when the watch expires (410) and yields the list it finds", async () => {
    const path = "/api/v1/namespaces/shop/pods";
    const { transport, calls } = fakeTransport(
      {
        [path]: [
          async () => ({ items: [pod("shop", "a", "1")], resourceVersion: "1" }),
          async () => ({ items: [pod("shop", "a", "1"), pod("shop", "b", "7")], resourceVersion: "7" }),
        ],
      },
      {
        [path]: [
          async (emit) =>
            emit({
              type: "ERROR",
              object: { kind: "Status", code: 410, reason: "Expired", message: "too old" },
            }),
        ],
      },
    );
    const feed = watchPods(acting, "shop", undefined, { transport, ...immediately });
    try {
      expect(names((await feed.next()).value as PodList)).toEqual(["shop/a"]);
      expect(names((await feed.next()).value as PodList)).toEqual(["shop/a", "shop/b"]);
      expect(calls).toEqual([`list ${path}`, `watch ${path}`, `list ${path}`, `watch ${path}`]);
    } finally {
      await feed.return(undefined);
    }
  });

  it("coalesces a burst of changes into one snapshot after the window", async () => {
    const path = "/api/v1/namespaces/shop/pods";
    let clock = 1_000;
    const waits: number[] = [];
    const { transport } = fakeTransport(
      { [path]: [async () => ({ items: [pod("shop", "a", "1")], resourceVersion: "1" })] },
      {
        [path]: [
          async (emit) => {
            emit({ type: "ADDED", object: pod("shop", "b", "2") });
            emit({ type: "ADDED", object: pod("shop", "c", "3") });
            emit({ type: "DELETED", object: pod("shop", "a", "4") });
            await new Promise(() => {}); // then quiet
          },
        ],
      },
    );
    const feed = watchPods(acting, "shop", undefined, {
      transport,
      coalesceMs: 250,
      now: () => clock,
      sleep: async (ms) => {
        waits.push(ms);
        clock += ms;
      },
    });
    try {
      expect(names((await feed.next()).value as PodList)).toEqual(["shop/a"]);
      expect(names((await feed.next()).value as PodList)).toEqual(["shop/b", "shop/c"]);
      expect(waits).toEqual([250]);
    } finally {
      await feed.return(undefined);
    }
  });

  it("without a cluster-wide grant, watches each namespace and leaves out those it may not list", async () => {
    const { transport, calls } = fakeTransport({
      "/api/v1/pods": [async () => Promise.reject(forbidden("pods"))],
      "/api/v1/namespaces": [
        async () => ({
          items: [{ metadata: { name: "shop" } }, { metadata: { name: "vault" } }],
          resourceVersion: "3",
        }),
      ],
      "/api/v1/namespaces/shop/pods": [
        async () => ({ items: [pod("shop", "a", "1")], resourceVersion: "4" }),
      ],
      "/api/v1/namespaces/vault/pods": [async () => Promise.reject(forbidden("pods"))],
    });
    const feed = watchPods(acting, undefined, undefined, { transport, ...immediately });
    try {
      expect(names((await feed.next()).value as PodList)).toEqual(["shop/a"]);
      expect(calls.filter((call) => call.startsWith("list")).sort()).toEqual([
        "list /api/v1/namespaces",
        "list /api/v1/namespaces/shop/pods",
        "list /api/v1/namespaces/vault/pods",
        "list /api/v1/pods",
      ]);
    } finally {
      await feed.return(undefined);
    }
  });

  it("ends with the API's refusal when the user may list pods nowhere", async () => {
    const { transport } = fakeTransport({
      "/api/v1/pods": [async () => Promise.reject(forbidden("pods"))],
      "/api/v1/namespaces": [
        async () => ({ items: [{ metadata: { name: "vault" } }], resourceVersion: "3" }),
      ],
      "/api/v1/namespaces/vault/pods": [async () => Promise.reject(forbidden("pods"))],
    });
    const feed = watchPods(acting, undefined, undefined, { transport, ...immediately });
    await expect(feed.next()).rejects.toMatchObject({
      status: 403,
      message: expect.stringContaining("cannot list"),
    });
  });

  it("ends when the client unsubscribes, stopping its watches", async () => {
    const path = "/api/v1/namespaces/shop/pods";
    const { transport } = fakeTransport({
      [path]: [async () => ({ items: [], resourceVersion: "1" })],
    });
    const client = new AbortController();
    const feed = watchPods(acting, "shop", client.signal, { transport, ...immediately });
    expect(names((await feed.next()).value as PodList)).toEqual([]);
    const pending = feed.next();
    client.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
  });
});
