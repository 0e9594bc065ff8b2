import { describe, expect, it } from "vitest";
import { K8sError } from "./errors";
import {
  createListWatch,
  exponentialBackoff,
  openWatchCount,
  type RawWatchEvent,
  type WatchTransport,
} from "./watch";

interface Item {
  metadata: { name: string; resourceVersion: string };
}

const item = (name: string, resourceVersion: string): Item => ({ metadata: { name, resourceVersion } });

type WatchScript = (emit: (event: RawWatchEvent) => void, signal: AbortSignal) => Promise<void>;

/** A scripted transport: each list/watch call takes the next script and records its query. */
function fakeTransport(
  lists: (() => Promise<{ items: unknown[]; resourceVersion: string }>)[],
  watches: WatchScript[],
) {
  const calls: { kind: "list" | "watch"; query: Record<string, string | undefined> }[] = [];
  let idle: (() => void) | undefined;
  const idlePromise = new Promise<void>((resolve) => {
    idle = resolve;
  });
  const transport: WatchTransport = {
    async list(_path, query) {
      calls.push({ kind: "list", query });
      const next = lists.shift();
      if (!next) throw new Error("unexpected list");
      return next();
    },
    async watch(_path, query, onEvent, signal) {
      calls.push({ kind: "watch", query });
      const next = watches.shift();
      if (!next) {
        idle?.();
        // Park until stopped, like a quiet watch.
        await new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => resolve(), { once: true }),
        );
        return;
      }
      await next(onEvent, signal);
    },
  };
  return { transport, calls, idle: idlePromise };
}

function recorder() {
  const log: string[] = [];
  return {
    log,
    handlers: {
      onSync: (items: Item[], resourceVersion: string) =>
        log.push(`sync ${items.map((i) => i.metadata.name).join(",")} @${resourceVersion}`),
      onEvent: (type: string, object: Item) =>
        log.push(`${type} ${object.metadata.name}@${object.metadata.resourceVersion}`),
      onError: (error: K8sError) => log.push(`error ${error.status} ${error.reason}`),
    },
  };
}

const noSleep = async () => {};

describe("createListWatch", () => {
  it("lists, then watches from the list's resourceVersion with bookmarks", async () => {
    const { transport, calls, idle } = fakeTransport(
      [async () => ({ items: [item("a", "5")], resourceVersion: "10" })],
      [
        async (emit) => {
          emit({ type: "ADDED", object: item("b", "11") });
          emit({ type: "MODIFIED", object: item("a", "12") });
          emit({ type: "DELETED", object: item("b", "13") });
        },
      ],
    );
    const { log, handlers } = recorder();
    const watch = createListWatch<Item>({ path: "/api/v1/nodes", labelSelector: "x=y" }, handlers, {
      transport,
      sleep: noSleep,
      watchTimeoutSeconds: () => 300,
    });
    await idle;
    expect(log).toEqual(["sync a @10", "ADDED b@11", "MODIFIED a@12", "DELETED b@13"]);
    expect(calls[0]).toMatchObject({ kind: "list", query: { labelSelector: "x=y", limit: "500" } });
    expect(calls[1]?.query).toMatchObject({
      watch: "true",
      resourceVersion: "10",
      allowWatchBookmarks: "true",
      labelSelector: "x=y",
      timeoutSeconds: "300",
    });
    // The server ended the first watch normally: resume from the last event's version.
    expect(calls[2]?.query.resourceVersion).toBe("13");
    expect(watch.resourceVersion()).toBe("13");
    watch.stop();
  });

  it("follows pagination before calling onSync once", async () => {
    const pages = [
      async () => ({ items: [item("a", "1")], resourceVersion: "20", continue: "t1" }),
      async () => ({ items: [item("b", "2")], resourceVersion: "20" }),
    ];
    const { transport, calls, idle } = fakeTransport(pages, []);
    const { log, handlers } = recorder();
    const watch = createListWatch<Item>({ path: "/p" }, handlers, { transport, sleep: noSleep, pageSize: 1 });
    await idle;
    expect(log).toEqual(["sync a,b @20"]);
    expect(calls[1]?.query.continue).toBe("t1");
    watch.stop();
  });

  it("resumes a dropped watch from the last bookmark with backoff, without relisting", async () => {
    const delays: number[] = [];
    const { transport, calls, idle } = fakeTransport(
      [async () => ({ items: [], resourceVersion: "100" })],
      [
        async (emit) => {
          emit({ type: "ADDED", object: item("a", "101") });
          emit({ type: "BOOKMARK", object: { metadata: { resourceVersion: "150" } } });
          throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } });
        },
        async () => {
          throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
        },
        async (emit) => {
          emit({ type: "MODIFIED", object: item("a", "160") });
        },
      ],
    );
    const { log, handlers } = recorder();
    const watch = createListWatch<Item>({ path: "/p" }, handlers, {
      transport,
      sleep: async (ms) => {
        delays.push(ms);
      },
      backoff: { delay: (attempt) => 1000 * 2 ** attempt },
    });
    await idle;
    expect(log).toEqual([
      "sync  @100",
      "ADDED a@101",
      "error 0 Unreachable",
      "error 0 Unreachable",
      "MODIFIED a@160",
    ]);
    expect(calls.map((c) => `${c.kind}:${c.query.resourceVersion ?? ""}`)).toEqual([
      "list:",
      "watch:100",
      "watch:150",
      "watch:150",
      "watch:160",
    ]);
    // The bookmark reset the attempt counter; the second consecutive failure backs off further.
    expect(delays).toEqual([1000, 2000]);
    watch.stop();
  });

  it("relists after a 410 ERROR event and calls onSync again", async () => {
    const { transport, calls, idle } = fakeTransport(
      [
        async () => ({ items: [item("a", "1")], resourceVersion: "10" }),
        async () => ({ items: [item("a", "1"), item("b", "30")], resourceVersion: "40" }),
      ],
      [
        async (emit) => {
          emit({
            type: "ERROR",
            object: {
              kind: "Status",
              code: 410,
              reason: "Expired",
              message: "too old resource version: 10 (35)",
            },
          });
          emit({ type: "ADDED", object: item("ignored", "99") });
        },
      ],
    );
    const { log, handlers } = recorder();
    const watch = createListWatch<Item>({ path: "/p" }, handlers, { transport, sleep: noSleep });
    await idle;
    expect(log).toEqual(["sync a @10", "sync a,b @40"]);
    expect(calls.map((c) => `${c.kind}:${c.query.resourceVersion ?? ""}`)).toEqual([
      "list:",
      "watch:10",
      "list:",
      "watch:40",
    ]);
    watch.stop();
  });

  it("relists after an HTTP 410 on the watch request", async () => {
    const { transport, idle } = fakeTransport(
      [
        async () => ({ items: [], resourceVersion: "10" }),
        async () => ({ items: [], resourceVersion: "50" }),
      ],
      [
        async () => {
          throw new K8sError({ status: 410, reason: "Gone", message: "gone" });
        },
      ],
    );
    const { log, handlers } = recorder();
    const watch = createListWatch<Item>({ path: "/p" }, handlers, { transport, sleep: noSleep });
    await idle;
    expect(log).toEqual(["sync  @10", "sync  @50"]);
    watch.stop();
  });

  it("reports other ERROR events and resumes from the same version", async () => {
    const { transport, calls, idle } = fakeTransport(
      [async () => ({ items: [], resourceVersion: "10" })],
      [
        async (emit) => {
          emit({
            type: "ERROR",
            object: { kind: "Status", code: 500, reason: "InternalError", message: "boom" },
          });
        },
      ],
    );
    const { log, handlers } = recorder();
    const watch = createListWatch<Item>({ path: "/p" }, handlers, { transport, sleep: noSleep });
    await idle;
    expect(log).toEqual(["sync  @10", "error 500 InternalError"]);
    expect(calls.map((c) => c.query.resourceVersion ?? "")).toEqual(["", "10", "10"]);
    watch.stop();
  });

  it("retries a failed list with backoff and counts open watches until stopped", async () => {
    const before = openWatchCount();
    const { transport, idle } = fakeTransport(
      [
        async () => {
          throw new K8sError({ status: 403, reason: "Forbidden", message: "nodes is forbidden" });
        },
        async () => ({ items: [], resourceVersion: "7" }),
      ],
      [],
    );
    const { log, handlers } = recorder();
    const watch = createListWatch<Item>({ path: "/p" }, handlers, { transport, sleep: noSleep });
    expect(openWatchCount()).toBe(before + 1);
    await idle;
    expect(log).toEqual(["error 403 Forbidden", "sync  @7"]);
    watch.stop();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(openWatchCount()).toBe(before);
  });
});

describe("exponentialBackoff", () => {
  it("doubles up to the cap with equal jitter", () => {
    const low = exponentialBackoff({ initialMs: 100, maxMs: 1000, random: () => 0 });
    const high = exponentialBackoff({ initialMs: 100, maxMs: 1000, random: () => 1 });
    expect([0, 1, 2, 3, 4, 10].map((a) => low.delay(a))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([0, 1, 2, 3, 4, 10].map((a) => high.delay(a))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});
