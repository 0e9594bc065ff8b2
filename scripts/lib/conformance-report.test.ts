import { describe, expect, it } from "vitest";
import {
  checkRecorded,
  compare,
  focusOf,
  mergeRuns,
  parseJUnit,
  parseShard,
  shardOf,
  sideBySide,
  specsOfDryRun,
  summarize,
  type TestCase,
} from "./conformance-report";

const report = (cases: string) => `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4"><testsuite name="Kubernetes e2e suite">
  <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="1.5"></testcase>
  ${cases}
  <testcase name="[ReportAfterSuite] Kubernetes e2e suite report" classname="Kubernetes e2e suite" status="passed" time="0"></testcase>
</testsuite></testsuites>`;

const ring0 = parseJUnit(
  report(`
  <testcase name="[sig-api-machinery] Watchers should be able to restart watching [Conformance]" classname="Kubernetes e2e suite" status="passed" time="12.25"></testcase>
  <testcase name="[It] [sig-node] Pods should be submitted and removed [Conformance]" classname="Kubernetes e2e suite" status="failed" time="30">
    <failure message="" type="failed">[FAILED] Timed out after 30s.&#xA;second line</failure>
  </testcase>
  <testcase name="[sig-apps] Deployment &quot;quoted&quot; [Conformance]" classname="Kubernetes e2e suite" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
  <testcase name="[sig-api-machinery] Only through Ring0 [Conformance]" classname="Kubernetes e2e suite" status="passed" time="1"/>`),
);
const baseline = parseJUnit(
  report(`
  <testcase name="[sig-api-machinery] Watchers should be able to restart watching [Conformance]" classname="Kubernetes e2e suite" status="passed" time="10"></testcase>
  <testcase name="[sig-node] Pods should be submitted and removed [Conformance]" classname="Kubernetes e2e suite" status="passed" time="8"></testcase>
  <testcase name="[sig-apps] Deployment &quot;quoted&quot; [Conformance]" classname="Kubernetes e2e suite" status="skipped" time="0"><skipped message="skipped"></skipped></testcase>
  <testcase name="[sig-api-machinery] Only through Ring0 [Conformance]" classname="Kubernetes e2e suite" status="failed" time="1"><failure message="x"></failure></testcase>`),
);

describe("conformance reports", () => {
  it("reads spec cases with their SIG, status, time and first failure line; suite nodes left out", () => {
    expect(ring0).toHaveLength(4);
    expect(ring0[1]).toEqual({
      name: "[sig-node] Pods should be submitted and removed [Conformance]",
      sig: "sig-node",
      status: "failed",
      seconds: 30,
      failure: "[FAILED] Timed out after 30s.",
    });
    expect(ring0[2]).toMatchObject({
      name: '[sig-apps] Deployment "quoted" [Conformance]',
      status: "skipped",
    });
  });

  it("tallies per SIG and in total", () => {
    const summary = summarize(ring0);
    expect(summary.total).toEqual({ passed: 2, failed: 1, skipped: 1 });
    expect(summary.bySig["sig-api-machinery"]).toEqual({ passed: 2, failed: 0, skipped: 0 });
    expect(summary.seconds).toBe(43);
  });

  it("lists what passes on the baseline and fails through Ring0, and the other way round", () => {
    const comparison = compare(ring0, baseline);
    expect(comparison.regressions.map((testCase) => testCase.name)).toEqual([
      "[sig-node] Pods should be submitted and removed [Conformance]",
    ]);
    expect(comparison.onlyThroughRing0).toEqual(["[sig-api-machinery] Only through Ring0 [Conformance]"]);
    expect(comparison.unmatched).toEqual([]);
    expect(compare(ring0.slice(0, 1), baseline).unmatched).toHaveLength(2);
  });

  it("prints the two summaries side by side, SIGs that ran only", () => {
    const text = sideBySide(summarize(ring0), summarize(baseline));
    expect(text.split("\n")[0]).toMatch(/through Ring0\s+baseline \(bare\)/);
    expect(text).toMatch(/sig-node\s+0 passed, 1 failed\s+1 passed, 0 failed/);
    expect(text).not.toContain("sig-apps");
    expect(text).toMatch(/total\s+2 passed, 1 failed\s+2 passed, 1 failed/);
  });

  it("focuses on exactly the recorded specs, names taken literally", () => {
    const names = ["[sig-node] Pods should get a host IP [NodeConformance] [Conformance]", "a (b) c.d"];
    const focus = new RegExp(focusOf(names));
    for (const name of names) expect(focus.test(name)).toBe(true);
    expect(focus.test("[sig-node] Pods should get a host IP [NodeConformance] [Conformance]x")).toBe(true);
    expect(focus.test("a b c.d")).toBe(false);
    expect(focus.test("[sig-node] Pods should get a host IPs")).toBe(false);
    expect(() => focusOf([])).toThrow(/no spec/);
  });

  it("holds a run against the recorded list: failed or missing specs are regressions", () => {
    const spec = (name: string, status: TestCase["status"], failure?: string): TestCase => ({
      name,
      sig: "sig-x",
      status,
      seconds: 1,
      ...(failure ? { failure } : {}),
    });
    const checked = checkRecorded({ specs: ["a", "b", "c"] }, [
      spec("a", "passed"),
      spec("b", "failed", "boom"),
      spec("d", "passed"),
      spec("e", "skipped"),
    ]);
    expect(checked.tally).toEqual({ passed: 1, failed: 2, skipped: 0 });
    expect(checked.regressions).toEqual([
      { name: "b", failure: "boom" },
      { name: "c", failure: "did not run (renamed or left out of the selection?)" },
    ]);
    expect(checked.newlyPassing).toEqual(["d"]);
  });

  it("reads the selected specs' names from a dry run, labels left off", () => {
    const output = [
      "Will run 2 of 7579 specs",
      "[sig-node] Pods should get a host IP [NodeConformance] [Conformance] [sig-node, NodeConformance, Conformance]",
      "k8s.io/kubernetes@v1.36.4/test/e2e/common/node/pods.go:205",
      "[sig-api-machinery] Watchers should observe add, update, and delete watch notifications on configmaps [Conformance] [sig-api-machinery, Conformance]",
      "[sig-node] Pods should get a host IP [NodeConformance] [Conformance] [sig-node, NodeConformance, Conformance]",
      "------------------------------",
    ].join("\n");
    expect(specsOfDryRun(output)).toEqual([
      "[sig-api-machinery] Watchers should observe add, update, and delete watch notifications on configmaps [Conformance]",
      "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]",
    ]);
  });

  it("splits a selection into shards that cover it once, and says what a bad shard lacks", () => {
    const specs = Array.from({ length: 10 }, (_, index) => `spec ${index}`);
    const shards = [1, 2, 3].map((index) => shardOf(specs, { index, of: 3 }));
    expect(shards.map((shard) => shard.length)).toEqual([4, 3, 3]);
    expect(shards.flat().sort()).toEqual([...specs].sort());
    expect(parseShard("2/4")).toEqual({ index: 2, of: 4 });
    for (const bad of ["0/4", "5/4", "2", "a/b", "1/65"]) expect(parseShard(bad)).toMatch(/K\/N/);
  });

  it("merges the shards of a run: a spec's status is that of the run that ran it", () => {
    const at = (name: string, status: "passed" | "failed" | "skipped") => ({
      name,
      sig: "sig-node",
      status,
      seconds: 1,
    });
    const merged = mergeRuns([
      [at("a", "passed"), at("b", "skipped"), at("c", "skipped")],
      [at("a", "skipped"), at("b", "failed"), at("c", "skipped")],
    ]);
    expect(Object.fromEntries(merged.map((testCase) => [testCase.name, testCase.status]))).toEqual({
      a: "passed",
      b: "failed",
      c: "skipped",
    });
  });
});
