/**
 * The upstream conformance suite's JUnit reports, read and compared (pure: unit-tested). Ginkgo v2
 * writes one `<testcase>` per spec with a `status` attribute (passed, failed, skipped, pending) and
 * a `<failure>` child with the message when it failed; suite-level nodes (`[SynchronizedBeforeSuite]`,
 * `[ReportAfterSuite]` …) are not specs and are left out.
 */

export type CaseStatus = "passed" | "failed" | "skipped";

export interface TestCase {
  name: string;
  /** `sig-api-machinery`, … from the spec's name; "other" when it names none. */
  sig: string;
  status: CaseStatus;
  seconds: number;
  /** The first line of the failure message, when it failed. */
  failure?: string;
}

export interface Tally {
  passed: number;
  failed: number;
  skipped: number;
}

export interface Summary {
  total: Tally;
  bySig: Record<string, Tally>;
  seconds: number;
}

const entities: Record<string, string> = { quot: '"', amp: "&", lt: "<", gt: ">", apos: "'" };

function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity.startsWith("#x")) return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
    if (entity.startsWith("#")) return String.fromCodePoint(Number.parseInt(entity.slice(1), 10));
    return entities[entity.toLowerCase()] ?? whole;
  });
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return match?.[1] === undefined ? undefined : unescapeXml(match[1]);
}

/** The spec-level test cases of a Ginkgo JUnit report. */
export function parseJUnit(xml: string): TestCase[] {
  const cases: TestCase[] = [];
  const pattern = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const match of xml.matchAll(pattern)) {
    const tag = match[1] ?? "";
    const body = match[3] ?? "";
    // Ginkgo prefixes the spec's leaf node type ("[It] "); the spec's name is the rest.
    const name = (attribute(tag, "name") ?? "").replace(/^\[It\] /, "");
    if (!name || /^\[(Synchronized)?(Before|After)Suite\]|^\[Report(Before|After)Suite\]/.test(name))
      continue;
    const declared = attribute(tag, "status");
    const failed = /<(failure|error)\b/.test(body);
    const skipped = /<skipped\b/.test(body);
    const status: CaseStatus =
      declared === "failed" ||
      declared === "panicked" ||
      declared === "timedout" ||
      declared === "interrupted" ||
      failed
        ? "failed"
        : declared === "skipped" || declared === "pending" || skipped
          ? "skipped"
          : "passed";
    const failureElement = /<(failure|error)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1>)/.exec(body);
    const failureMessage = failureElement
      ? attribute(failureElement[2] ?? "", "message") || unescapeXml(failureElement[3] ?? "")
      : undefined;
    cases.push({
      name,
      sig: /\[(sig-[a-z0-9-]+)\]/.exec(name)?.[1] ?? "other",
      status,
      seconds: Number(attribute(tag, "time") ?? 0) || 0,
      ...(status === "failed" && failureMessage !== undefined
        ? { failure: failureMessage.trim().split("\n")[0]?.slice(0, 300) }
        : {}),
    });
  }
  return cases;
}

const empty = (): Tally => ({ passed: 0, failed: 0, skipped: 0 });

export function summarize(cases: readonly TestCase[]): Summary {
  const total = empty();
  const bySig: Record<string, Tally> = {};
  let seconds = 0;
  for (const testCase of cases) {
    total[testCase.status] += 1;
    bySig[testCase.sig] ??= empty();
    (bySig[testCase.sig] as Tally)[testCase.status] += 1;
    seconds += testCase.seconds;
  }
  return { total, bySig, seconds: Math.round(seconds) };
}

export interface Comparison {
  /** Passed on the baseline, failed through Ring0: each is fixed or explained (README). */
  regressions: TestCase[];
  /** Failed on the baseline, passed through Ring0. */
  onlyThroughRing0: string[];
  /** Ran on one side only (a different selection or an interrupted run). */
  unmatched: string[];
}

export function compare(ring0: readonly TestCase[], baseline: readonly TestCase[]): Comparison {
  const base = new Map(baseline.map((testCase) => [testCase.name, testCase]));
  const ours = new Map(ring0.map((testCase) => [testCase.name, testCase]));
  const regressions: TestCase[] = [];
  const onlyThroughRing0: string[] = [];
  const unmatched: string[] = [];
  for (const testCase of ring0) {
    const other = base.get(testCase.name);
    if (!other) {
      if (testCase.status !== "skipped") unmatched.push(testCase.name);
      continue;
    }
    if (other.status === "passed" && testCase.status === "failed") regressions.push(testCase);
    if (other.status === "failed" && testCase.status === "passed") onlyThroughRing0.push(testCase.name);
  }
  for (const testCase of baseline) {
    if (!ours.has(testCase.name) && testCase.status !== "skipped") unmatched.push(testCase.name);
  }
  return { regressions, onlyThroughRing0, unmatched: [...new Set(unmatched)].sort() };
}

/** The two summaries side by side, one line per SIG, ran specs only (skipped are the selection's). */
export function sideBySide(ring0: Summary, baseline: Summary): string {
  const sigs = [...new Set([...Object.keys(ring0.bySig), ...Object.keys(baseline.bySig)])].sort();
  const cell = (tally: Tally | undefined) => (tally ? `${tally.passed} passed, ${tally.failed} failed` : "—");
  const rows: [string, string, string][] = [
    ["", "through Ring0", "baseline (bare)"],
    ...sigs
      .filter((sig) => {
        const a = ring0.bySig[sig];
        const b = baseline.bySig[sig];
        return (a?.passed ?? 0) + (a?.failed ?? 0) + (b?.passed ?? 0) + (b?.failed ?? 0) > 0;
      })
      .map((sig): [string, string, string] => [sig, cell(ring0.bySig[sig]), cell(baseline.bySig[sig])]),
    ["total", cell(ring0.total), cell(baseline.total)],
  ];
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  return rows
    .map((row) =>
      row
        .map((text, column) => text.padEnd(widths[column] ?? 0))
        .join("   ")
        .trimEnd(),
    )
    .join("\n");
}

/** The specs CI runs and expects to pass through Ring0 (test/conformance/ci.json). */
export interface RecordedList {
  /** Where the list comes from and how to refresh it. */
  note?: string;
  specs: string[];
}

const regExpSpecials = /[.*+?^${}()|[\]\\]/g;

/** A Ginkgo focus that selects exactly these specs (each name matched literally). */
export function focusOf(specs: readonly string[]): string {
  if (specs.length === 0) throw new Error("the recorded list names no spec");
  return specs.map((name) => name.replace(regExpSpecials, "\\$&")).join("|");
}

/**
 * A run held against the recorded list: every recorded spec must have passed (one that failed or
 * did not run is a regression). The tally counts recorded specs only (the rest of the suite is not
 * selected); specs outside the list that ran and passed are named so the list can grow.
 */
export function checkRecorded(
  list: RecordedList,
  cases: readonly TestCase[],
): { tally: Tally; regressions: { name: string; failure: string }[]; newlyPassing: string[] } {
  const byName = new Map(cases.map((testCase) => [testCase.name, testCase]));
  const recorded = new Set(list.specs);
  const regressions: { name: string; failure: string }[] = [];
  let passed = 0;
  for (const name of list.specs) {
    const found = byName.get(name);
    if (found?.status === "passed") passed += 1;
    else
      regressions.push({
        name,
        failure: found
          ? (found.failure ?? found.status)
          : "did not run (renamed or left out of the selection?)",
      });
  }
  const others = cases.filter((testCase) => !recorded.has(testCase.name));
  return {
    tally: { passed, failed: regressions.length, skipped: 0 },
    regressions,
    newlyPassing: others.filter((testCase) => testCase.status === "passed").map((testCase) => testCase.name),
  };
}

/**
 * The names of the specs a dry run selected, from its verbose, uncoloured output: each spec is a
 * line `[sig-…] Its text [Conformance] [sig-…, Conformance]`, the last group being its labels
 * (every selected [Conformance] spec has some). The names are the reports' and `focusOf`'s.
 */
export function specsOfDryRun(output: string): string[] {
  const names = new Set<string>();
  for (const line of output.split("\n")) {
    if (!line.startsWith("[sig-")) continue;
    const labels = /\s\[[^\]]*\]$/.exec(line.trimEnd());
    if (!labels) continue;
    names.add(line.trimEnd().slice(0, labels.index));
  }
  return [...names].sort();
}

/** "K/N" (1 ≤ K ≤ N ≤ 64), or undefined with what to fix. */
export function parseShard(text: string): { index: number; of: number } | string {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  const index = Number(match?.[1]);
  const of = Number(match?.[2]);
  if (!match || index < 1 || of < 1 || of > 64 || index > of) {
    return `--shard takes K/N with 1 ≤ K ≤ N ≤ 64 (for example 2/4), not ${JSON.stringify(text)}`;
  }
  return { index, of };
}

/** Shard K of N of a selection: every Nth spec of the sorted list, so each shard mixes all SIGs. */
export function shardOf(specs: readonly string[], shard: { index: number; of: number }): string[] {
  return [...specs].sort().filter((_, position) => position % shard.of === shard.index - 1);
}

/**
 * One run made of several (the shards of a full run): each spec once, with the status of the run
 * that ran it (one that ran it beats those that skipped it; a later run beats an earlier one).
 */
export function mergeRuns(runs: readonly (readonly TestCase[])[]): TestCase[] {
  const merged = new Map<string, TestCase>();
  for (const run of runs) {
    for (const testCase of run) {
      if (merged.has(testCase.name) && testCase.status === "skipped") continue;
      merged.set(testCase.name, testCase);
    }
  }
  return [...merged.values()];
}
