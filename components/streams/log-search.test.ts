import { describe, expect, it } from "vitest";
import { LogBuffer } from "@/components/streams/log-buffer";
import { highlightSegments, lineMatches, MatchIndex, searchNeedle } from "@/components/streams/log-search";

describe("highlightSegments", () => {
  it("marks every case-insensitive occurrence", () => {
    expect(highlightSegments("Error: an error ERROR", searchNeedle("error"))).toEqual([
      { text: "Error", match: true },
      { text: ": an ", match: false },
      { text: "error", match: true },
      { text: " ", match: false },
      { text: "ERROR", match: true },
    ]);
  });

  it("returns the text whole when nothing matches or nothing is searched", () => {
    expect(highlightSegments("abc", "x")).toEqual([{ text: "abc", match: false }]);
    expect(highlightSegments("abc", "")).toEqual([{ text: "abc", match: false }]);
    expect(highlightSegments("", "x")).toEqual([{ text: "", match: false }]);
  });

  it("does not overlap matches", () => {
    expect(highlightSegments("aaa", "aa")).toEqual([
      { text: "aa", match: true },
      { text: "a", match: false },
    ]);
  });

  it("joins back to the text", () => {
    const text = "GET /healthz 200 — get /ready 503";
    expect(
      highlightSegments(text, "get")
        .map((segment) => segment.text)
        .join(""),
    ).toBe(text);
  });
});

describe("lineMatches", () => {
  it("matches everything for an empty needle", () => {
    expect(lineMatches("x", "")).toBe(true);
    expect(lineMatches("Warning", searchNeedle("WARN"))).toBe(true);
    expect(lineMatches("info", "warn")).toBe(false);
  });
});

describe("MatchIndex", () => {
  const texts = (buffer: LogBuffer, index: MatchIndex) =>
    Array.from({ length: index.count }, (_, position) => buffer.bySeq(index.at(position) ?? -1)?.text);

  it("finds matches incrementally as lines arrive and forgets dropped ones", () => {
    const buffer = new LogBuffer({ maxLines: 4 });
    const index = new MatchIndex();
    index.setNeedle("err");
    buffer.push([
      { ts: "", text: "ok 1" },
      { ts: "", text: "ERR 2" },
    ]);
    index.sync(buffer);
    expect(texts(buffer, index)).toEqual(["ERR 2"]);
    buffer.push([
      { ts: "", text: "err 3" },
      { ts: "", text: "ok 4" },
      { ts: "", text: "ok 5" },
    ]);
    index.sync(buffer);
    // "ok 1" dropped (cap 4); both matches still held.
    expect(texts(buffer, index)).toEqual(["ERR 2", "err 3"]);
    buffer.push([
      { ts: "", text: "ok 6" },
      { ts: "", text: "err 7" },
    ]);
    index.sync(buffer);
    expect(texts(buffer, index)).toEqual(["err 7"]);
  });

  it("rescans when the needle changes and empties on clear", () => {
    const buffer = new LogBuffer();
    buffer.push([
      { ts: "", text: "alpha" },
      { ts: "", text: "beta" },
    ]);
    const index = new MatchIndex();
    index.setNeedle("a");
    index.sync(buffer);
    expect(index.count).toBe(2);
    index.setNeedle("alp");
    index.sync(buffer);
    expect(texts(buffer, index)).toEqual(["alpha"]);
    buffer.clear();
    index.sync(buffer);
    expect(index.count).toBe(0);
  });

  it("finds the first match at or after a line", () => {
    const buffer = new LogBuffer();
    buffer.push(["x", "a", "x", "a", "a"].map((text) => ({ ts: "", text })));
    const index = new MatchIndex();
    index.setNeedle("a");
    index.sync(buffer);
    expect(index.indexAtOrAfter(0)).toBe(0);
    expect(index.indexAtOrAfter(2)).toBe(1);
    expect(index.indexAtOrAfter(4)).toBe(2);
    expect(index.indexAtOrAfter(5)).toBe(3);
  });

  it("compacts after many drops and stays correct", () => {
    const buffer = new LogBuffer({ maxLines: 10 });
    const index = new MatchIndex();
    index.setNeedle("m");
    for (let batch = 0; batch < 1_000; batch++) {
      buffer.push([
        { ts: "", text: `m${batch}` },
        { ts: "", text: `x${batch}` },
      ]);
      index.sync(buffer);
    }
    expect(texts(buffer, index)).toEqual(["m995", "m996", "m997", "m998", "m999"]);
  });
});
