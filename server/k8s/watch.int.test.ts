import https from "node:https";
import { describe, expect, inject, it } from "vitest";
import { localSuperCluster } from "@/server/cluster/local";
import { createLogger } from "@/server/logger";
import { deleteObject, serverSideApply } from "./apply";
import { eventually, testNamespace, testSuperCluster } from "./test-cluster";
import { clusterWatchTransport, createListWatch, listAndWatch, type WatchTransport } from "./watch";

const conn = testSuperCluster();

/** Compact the super cluster's etcd up to its current revision (etcd's JSON gateway, with a client certificate). */
async function compactEtcd(): Promise<number> {
  const cluster = localSuperCluster({ stateDir: inject("superStateDir"), logger: createLogger({}, "warn") });
  const client = await cluster.etcdClient();
  if (!client) throw new Error("no etcd endpoint in the kwokctl cluster config");
  const post = (path: string, body: unknown) =>
    new Promise<{ header?: { revision?: string } }>((resolve, reject) => {
      const request = https.request(
        `${client.endpoint}${path}`,
        { method: "POST", ca: client.ca, cert: client.cert, key: client.key },
        (response) => {
          let text = "";
          response.on("data", (chunk: Buffer) => {
            text += chunk.toString("utf8");
          });
          response.on("end", () => {
            if (response.statusCode !== 200)
              reject(new Error(`etcd ${path}: HTTP ${response.statusCode} ${text}`));
            else resolve(JSON.parse(text) as { header?: { revision?: string } });
          });
        },
      );
      request.on("error", reject);
      request.end(JSON.stringify(body));
    });
  const revision = Number(
    (await post("/v3/kv/range", { key: Buffer.from("/").toString("base64") })).header?.revision,
  );
  await post("/v3/kv/compaction", { revision: String(revision), physical: true });
  return revision;
}

interface ConfigMap {
  metadata: { name: string; resourceVersion: string };
  data?: Record<string, string>;
}

const configMap = (namespace: string, name: string, value: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace, labels: { "ring0.dev/test": "watch" } },
  data: { value },
});

// Only our objects: the controller manager adds kube-root-ca.crt to every namespace.
const selector = "ring0.dev/test=watch";

function recorder() {
  const log: string[] = [];
  const syncs: string[][] = [];
  return {
    log,
    syncs,
    handlers: {
      onSync: (items: ConfigMap[]) => syncs.push(items.map((item) => item.metadata.name).sort()),
      onEvent: (type: string, object: ConfigMap) =>
        log.push(`${type} ${object.metadata.name}=${object.data?.value ?? ""}`),
    },
  };
}

describe("listAndWatch against the super cluster", () => {
  it("lists, then sees adds, modifications and deletes", async () => {
    const [namespace, cleanup] = await testNamespace(conn, "watch");
    try {
      await serverSideApply(conn, configMap(namespace, "before", "0"));
      const { log, syncs, handlers } = recorder();
      // Only this test's objects: the controller-manager adds kube-root-ca.crt to every namespace.
      const watch = listAndWatch<ConfigMap>(
        conn,
        { path: `/api/v1/namespaces/${namespace}/configmaps`, labelSelector: selector },
        handlers,
      );
      try {
        await eventually(() => syncs.length === 1);
        expect(syncs[0]).toContain("before");
        await serverSideApply(conn, configMap(namespace, "a", "1"));
        await serverSideApply(conn, configMap(namespace, "a", "2"));
        await deleteObject(conn, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace } });
        await eventually(() => log.length >= 3);
        expect(log).toEqual(["ADDED a=1", "MODIFIED a=2", "DELETED a=2"]);
        expect(Number(watch.resourceVersion())).toBeGreaterThan(0);
      } finally {
        watch.stop();
      }
    } finally {
      await cleanup();
    }
  });

  it("resumes a dropped watch from its last resourceVersion without missing or repeating events", async () => {
    const [namespace, cleanup] = await testNamespace(conn, "resume");
    try {
      const real = clusterWatchTransport(conn);
      let drops = 0;
      let releaseRetry: () => void = () => {};
      const retryGate = new Promise<void>((resolve) => {
        releaseRetry = resolve;
      });
      const watchQueries: string[] = [];
      // The real transport, except that the first watch connection is cut after its first event.
      const flaky: WatchTransport = {
        list: real.list,
        async watch(path, query, onEvent, signal) {
          watchQueries.push(query.resourceVersion ?? "");
          if (drops > 0) return real.watch(path, query, onEvent, signal);
          const cut = new AbortController();
          const both = AbortSignal.any([signal, cut.signal]);
          await real.watch(
            path,
            query,
            (event) => {
              onEvent(event);
              if (event.type !== "BOOKMARK") cut.abort();
            },
            both,
          );
          drops++;
          throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } });
        },
      };
      const { log, syncs, handlers } = recorder();
      const errors: string[] = [];
      const watch = createListWatch<ConfigMap>(
        { path: `/api/v1/namespaces/${namespace}/configmaps`, labelSelector: selector },
        { ...handlers, onError: (error) => errors.push(error.reason) },
        { transport: flaky, sleep: () => retryGate },
      );
      try {
        await eventually(() => syncs.length === 1);
        await serverSideApply(conn, configMap(namespace, "first", "1"));
        await eventually(() => drops === 1);
        // Written while the watch is down: must arrive after the resume, exactly once.
        await serverSideApply(conn, configMap(namespace, "second", "2"));
        await serverSideApply(conn, configMap(namespace, "first", "3"));
        releaseRetry();
        await serverSideApply(conn, configMap(namespace, "third", "4"));
        await eventually(() => log.length >= 4);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(log).toEqual(["ADDED first=1", "ADDED second=2", "MODIFIED first=3", "ADDED third=4"]);
        expect(errors).toEqual(["Unreachable"]);
        expect(syncs).toHaveLength(1);
        expect(watchQueries[1]).not.toBe(watchQueries[0]);
      } finally {
        watch.stop();
      }
    } finally {
      await cleanup();
    }
  });

  it("relists when the API server answers 410 for a resourceVersion etcd compacted away", async () => {
    const [namespace, cleanup] = await testNamespace(conn, "gone");
    try {
      const real = clusterWatchTransport(conn);
      const template = (name: string) => ({
        apiVersion: "v1",
        kind: "PodTemplate",
        metadata: { name, namespace },
        template: { spec: { containers: [{ name: "app", image: "registry.invalid/app:1" }] } },
      });
      await serverSideApply(conn, template("existing"));
      // The first watch connects only after more writes and an etcd compaction past the list's
      // resourceVersion, like a client coming back from a long disconnection. PodTemplates bypass
      // the watch cache in the local super cluster, so this is etcd's and the API server's real 410.
      let releaseFirstWatch: () => void = () => {};
      const firstWatchGate = new Promise<void>((resolve) => {
        releaseFirstWatch = resolve;
      });
      let listed: () => void = () => {};
      const firstList = new Promise<void>((resolve) => {
        listed = resolve;
      });
      let watches = 0;
      const serverErrors: unknown[] = [];
      const late: WatchTransport = {
        async list(path, query, signal) {
          const page = await real.list(path, query, signal);
          listed();
          return page;
        },
        async watch(path, query, onEvent, signal) {
          if (watches++ === 0) await firstWatchGate;
          await real.watch(
            path,
            query,
            (event) => {
              if (event.type === "ERROR") serverErrors.push(event.object);
              onEvent(event);
            },
            signal,
          );
        },
      };
      const { log, syncs, handlers } = recorder();
      const watch = createListWatch<ConfigMap>(
        { path: `/api/v1/namespaces/${namespace}/podtemplates` },
        handlers,
        {
          transport: late,
        },
      );
      try {
        await firstList;
        await serverSideApply(conn, template("while-away-1"));
        await serverSideApply(conn, template("while-away-2"));
        await compactEtcd();
        releaseFirstWatch();
        await eventually(() => syncs.length === 2);
        expect(serverErrors).toEqual([
          expect.objectContaining({
            code: 410,
            reason: "Expired",
            message: "The resourceVersion for the provided watch is too old.",
          }),
        ]);
        expect(syncs).toEqual([["existing"], ["existing", "while-away-1", "while-away-2"]]);
        expect(log).toEqual([]);
        await serverSideApply(conn, template("after"));
        await eventually(() => log.includes("ADDED after="));
      } finally {
        watch.stop();
      }
    } finally {
      await cleanup();
    }
  });
});
