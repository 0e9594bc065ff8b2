import { describe, expect, it } from "vitest";
import {
  checkRecorded,
  compare,
  focusOf,
  parseJUnit,
  sideBySide,
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
});
