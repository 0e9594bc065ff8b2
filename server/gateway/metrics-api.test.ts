import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import type { PodUsageSample } from "@/server/nodes/usage";
import {
  createBufferingLimiter,
  isAugmentableDiscovery,
  jsonOnlyAccept,
  metricsRoute,
  podMetricsItems,
  withMetricsGroup,
} from "./metrics-api";

describe("the gateway's metrics API", () => {
  it("routes only well-formed metrics.k8s.io paths, pods by namespace and name", () => {
    expect(metricsRoute("/apis/metrics.k8s.io")).toEqual({ kind: "group" });
    expect(metricsRoute("/apis/metrics.k8s.io/v1beta1")).toEqual({ kind: "resources" });
    expect(metricsRoute("/apis/metrics.k8s.io/v1beta1/pods")).toEqual({ kind: "pods" });
    expect(metricsRoute("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods")).toEqual({
      kind: "pods",
      namespace: "default",
    });
    expect(metricsRoute("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web-1.a")).toEqual({
      kind: "pods",
      namespace: "default",
      name: "web-1.a",
    });
    // Nodes, other versions and anything malformed are refused, never passed on.
    for (const path of [
      "/apis/metrics.k8s.io/v1beta1/nodes",
      "/apis/metrics.k8s.io/v1/pods",
      "/apis/metrics.k8s.io/v1beta1/namespaces/Default/pods",
      "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/x/y",
      "/apis/metrics.k8s.io/v1beta1/namespaces/%2e%2e/pods",
    ])
      expect(metricsRoute(path)).toEqual({ kind: "nodes" });
    expect(metricsRoute("/apis/apps/v1")).toBeUndefined();
    expect(metricsRoute("/api/v1/pods")).toBeUndefined();
  });

  it("adds the group to legacy and aggregated /apis discovery, once", () => {
    const legacy = withMetricsGroup({
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: [{ name: "apps" }],
    }) as {
      groups: { name: string; preferredVersion: { groupVersion: string } }[];
    };
    expect(legacy.groups.map((group) => group.name)).toEqual(["apps", "metrics.k8s.io"]);
    expect(legacy.groups[1]?.preferredVersion.groupVersion).toBe("metrics.k8s.io/v1beta1");
    expect(withMetricsGroup(legacy)).toEqual(legacy);
    const aggregated = withMetricsGroup({
      kind: "APIGroupDiscoveryList",
      apiVersion: "apidiscovery.k8s.io/v2",
      items: [{ metadata: { name: "apps" } }],
    }) as { items: { metadata: { name: string }; versions?: { resources: { resource: string }[] }[] }[] };
    expect(aggregated.items.map((item) => item.metadata.name)).toEqual(["apps", "metrics.k8s.io"]);
    expect(aggregated.items[1]?.versions?.[0]?.resources.map((resource) => resource.resource)).toEqual([
      "pods",
    ]);
    expect(withMetricsGroup({ kind: "Status" })).toEqual({ kind: "Status" });
  });

  it("rewrites /apis as kubectl asks for it (client-go adds ?timeout=32s), nothing else", () => {
    const get = { method: "GET", headers: { accept: "application/json" } } as unknown as IncomingMessage;
    expect(isAugmentableDiscovery(get, "/apis", "")).toBe(true);
    expect(isAugmentableDiscovery(get, "/apis", "timeout=32s")).toBe(true);
    expect(isAugmentableDiscovery(get, "/apis", "watch=true")).toBe(false);
    expect(isAugmentableDiscovery(get, "/apis/apps", "")).toBe(false);
    const post = { method: "POST", headers: {} } as unknown as IncomingMessage;
    expect(isAugmentableDiscovery(post, "/apis", "")).toBe(false);
    const protobufOnly = {
      method: "GET",
      headers: { accept: "application/vnd.kubernetes.protobuf" },
    } as unknown as IncomingMessage;
    expect(isAugmentableDiscovery(protobufOnly, "/apis", "")).toBe(false);
  });

  it("bounds its buffering work per tenant and in all", () => {
    const limiter = createBufferingLimiter({ global: 3, perTenant: 2 });
    const a1 = limiter.acquire("a");
    const a2 = limiter.acquire("a");
    expect(a1 && a2).toBeTruthy();
    expect(limiter.acquire("a")).toBeUndefined();
    const b1 = limiter.acquire("b");
    expect(b1).toBeTruthy();
    expect(limiter.acquire("c")).toBeUndefined();
    a1?.();
    a1?.(); // twice is once
    expect(limiter.acquire("c")).toBeTruthy();
    expect(limiter.acquire("a")).toBeUndefined();
  });

  it("asks upstream for JSON only", () => {
    expect(
      jsonOnlyAccept(
        "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
      ),
    ).toBe("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json");
    expect(jsonOnlyAccept("application/vnd.kubernetes.protobuf")).toBeUndefined();
    expect(jsonOnlyAccept(undefined)).toBe("application/json");
  });

  it("writes PodMetrics as metrics-server does, only for listed pods with container samples", () => {
    const samples = new Map<string, PodUsageSample>([
      [
        "default/web",
        {
          cpuCores: 0.25,
          memoryBytes: 8 * 1024 * 1024,
          time: "2026-11-26T00:00:00Z",
          containers: { web: { cpuCores: 0.25, memoryBytes: 8 * 1024 * 1024 } },
        },
      ],
      ["default/empty", { cpuCores: 0, memoryBytes: 0, time: "", containers: {} }],
      [
        "other/secret",
        { cpuCores: 1, memoryBytes: 1, time: "", containers: { x: { cpuCores: 1, memoryBytes: 1 } } },
      ],
    ]);
    const items = podMetricsItems(
      [
        { metadata: { name: "web", namespace: "default", labels: { app: "web" } } },
        { metadata: { name: "empty", namespace: "default" } },
        { metadata: { name: "gone", namespace: "default" } },
      ],
      samples,
      new Date("2026-11-26T00:00:05Z"),
    );
    expect(items).toEqual([
      {
        metadata: {
          name: "web",
          namespace: "default",
          labels: { app: "web" },
          creationTimestamp: "2026-11-26T00:00:05.000Z",
        },
        timestamp: "2026-11-26T00:00:00Z",
        window: "10s",
        containers: [{ name: "web", usage: { cpu: "250000000n", memory: "8192Ki" } }],
      },
    ]);
  });
});
