import { describe, expect, it } from "vitest";
import { maxPodsPerView, parsePodSelection, podSelectionHref } from "@/components/streams/pod-selection";

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
