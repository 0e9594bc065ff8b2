import { describe, expect, it } from "vitest";
import {
  maxPodsPerView,
  ownerKey,
  parsePodSelection,
  parseWorkloadOfSelection,
  podSelectionHref,
  podsByOwner,
  workloadSelection,
} from "@/components/streams/pod-selection";

describe("pod selection in the URL", () => {
  it("round-trips pods through the link", () => {
    const pods = [
      { namespace: "default", name: "web-7d9f-abc" },
      { namespace: "jobs", name: "batch.1" },
    ];
    const href = podSelectionHref("acme", pods);
    expect(href).toBe("/t/acme/workloads/logs?pod=default%2Fweb-7d9f-abc&pod=jobs%2Fbatch.1");
    expect(parsePodSelection(new URL(href, "http://x").searchParams.getAll("pod"))).toEqual({ pods });
  });

  it("accepts one pod as a string and drops repeats", () => {
    expect(parsePodSelection("a/b")).toEqual({ pods: [{ namespace: "a", name: "b" }] });
    expect(parsePodSelection(["a/b", "a/b"]).pods).toHaveLength(1);
  });

  it("refuses what is not a pod, nothing, and too many", () => {
    expect(parsePodSelection(["a/b/c"]).problem).toMatch(/not a pod/);
    expect(parsePodSelection(["A/b"]).problem).toMatch(/not a pod/);
    expect(parsePodSelection(["a"]).problem).toMatch(/not a pod/);
    expect(parsePodSelection(undefined).problem).toMatch(/Choose pods/);
    const many = Array.from({ length: maxPodsPerView + 1 }, (_, index) => `a/p${index}`);
    expect(parsePodSelection(many)).toEqual({ pods: [], problem: expect.stringMatching(/At most/) });
  });
});

describe("a workload's pods", () => {
  const pod = (
    name: string,
    phase: string,
    createdAt: string,
    owner = "web-7d9f",
    namespace = "default",
  ) => ({
    namespace,
    name,
    phase,
    createdAt,
    owner: { kind: "ReplicaSet", name: owner },
  });

  it("groups pods by namespace and controlling owner, leaving out pods without one", () => {
    const pods = [
      pod("web-7d9f-a", "Running", "2025-01-01T00:00:00Z"),
      pod("web-7d9f-b", "Running", "2025-01-01T00:00:00Z"),
      pod("web-7d9f-c", "Running", "2025-01-01T00:00:00Z", "web-7d9f", "shop"),
      pod("api-1", "Running", "2025-01-01T00:00:00Z", "api"),
      { namespace: "default", name: "lonely", phase: "Running", createdAt: null, owner: null },
    ];
    const groups = podsByOwner(pods);
    expect([...groups.keys()].sort()).toEqual([
      "default/ReplicaSet/api",
      "default/ReplicaSet/web-7d9f",
      "shop/ReplicaSet/web-7d9f",
    ]);
    expect(
      groups.get(ownerKey("default", { kind: "ReplicaSet", name: "web-7d9f" }))?.map((p) => p.name),
    ).toEqual(["web-7d9f-a", "web-7d9f-b"]);
  });

  it("takes at most the cap, running pods first, then the newest, and says how many there are", () => {
    const pods = Array.from({ length: maxPodsPerView + 3 }, (_, index) =>
      pod(
        `web-${String(index).padStart(2, "0")}`,
        index === 0 ? "Pending" : "Running",
        `2025-01-01T00:00:${String(index).padStart(2, "0")}Z`,
      ),
    );
    const { pods: chosen, total } = workloadSelection(pods);
    expect(total).toBe(maxPodsPerView + 3);
    expect(chosen).toHaveLength(maxPodsPerView);
    expect(chosen[0]?.name).toBe(`web-${maxPodsPerView + 2}`);
    expect(chosen.map((p) => p.name)).not.toContain("web-00");
    expect(workloadSelection(pods.slice(0, 2))).toEqual({ pods: [pods[1], pods[0]], total: 2 });
  });

  it("carries the workload and its pod count in the link", () => {
    const href = podSelectionHref("acme", [{ namespace: "default", name: "web-7d9f-a" }], {
      kind: "ReplicaSet",
      name: "web-7d9f",
      total: 14,
    });
    expect(href).toBe("/t/acme/workloads/logs?pod=default%2Fweb-7d9f-a&workload=ReplicaSet%2Fweb-7d9f&of=14");
    const params = new URL(href, "http://x").searchParams;
    expect(
      parseWorkloadOfSelection({ workload: params.get("workload") ?? "", of: params.get("of") ?? "" }),
    ).toEqual({ kind: "ReplicaSet", name: "web-7d9f", total: 14 });
  });

  it("ignores a malformed workload", () => {
    expect(parseWorkloadOfSelection({})).toBeNull();
    expect(parseWorkloadOfSelection({ workload: "ReplicaSet/web", of: "0" })).toBeNull();
    expect(parseWorkloadOfSelection({ workload: "ReplicaSet/web", of: "many" })).toBeNull();
    expect(parseWorkloadOfSelection({ workload: "Replica Set/web", of: "2" })).toBeNull();
    expect(parseWorkloadOfSelection({ workload: "ReplicaSet/web/x", of: "2" })).toBeNull();
    expect(parseWorkloadOfSelection({ workload: ["ReplicaSet/web"], of: "2" })).toBeNull();
  });
});
