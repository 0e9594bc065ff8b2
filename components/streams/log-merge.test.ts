import { describe, expect, it } from "vitest";
import { LogMerger } from "@/components/streams/log-merge";

const at = (second: number, fraction = "") =>
  `2025-01-02T03:04:${String(second).padStart(2, "0")}${fraction}Z`;
const texts = (lines: { text: string }[]) => lines.map((line) => line.text);

describe("LogMerger", () => {
  it("merges streams by timestamp once every stream has spoken", () => {
    const merger = new LogMerger(2, 0, { graceMs: 1_000 });
    merger.add(
      0,
      [
        { ts: at(1), text: "a1" },
        { ts: at(3), text: "a3" },
      ],
      10,
    );
    // Stream 1 may still send something earlier than a1.
    expect(merger.drain(10)).toEqual([]);
    merger.add(
      1,
      [
        { ts: at(0), text: "b0" },
        { ts: at(2), text: "b2" },
      ],
      20,
    );
    // a3 waits: stream 1 may still send a line between 2 and 3.
    expect(texts(merger.drain(20))).toEqual(["b0", "a1", "b2"]);
    merger.add(1, [{ ts: at(4), text: "b4" }], 30);
    expect(texts(merger.drain(30))).toEqual(["a3"]);
    expect(merger.pending).toBe(1);
  });

  it("orders by real time even when fractions differ in length", () => {
    const merger = new LogMerger(2, 0);
    merger.add(0, [{ ts: at(5, ".12"), text: "later" }], 0);
    merger.add(1, [{ ts: at(5, ".1"), text: "earlier" }], 0);
    merger.end(0);
    merger.end(1);
    expect(texts(merger.drain(0))).toEqual(["earlier", "later"]);
  });

  it("releases a quiet stream's wait after the grace time and says when", () => {
    const merger = new LogMerger(2, 0, { graceMs: 500 });
    merger.add(0, [{ ts: at(1), text: "a1" }], 100);
    expect(merger.drain(100)).toEqual([]);
    expect(merger.nextRelease()).toBe(500);
    expect(texts(merger.drain(500))).toEqual(["a1"]);
    expect(merger.nextRelease()).toBeUndefined();
  });

  it("does not wait for an ended stream", () => {
    const merger = new LogMerger(3, 0);
    merger.end(1);
    merger.end(2);
    merger.add(0, [{ ts: at(1), text: "a1" }], 0);
    expect(texts(merger.drain(0))).toEqual(["a1"]);
  });

  it("keeps a line without a timestamp after its stream's previous line", () => {
    const merger = new LogMerger(2, 0);
    merger.add(
      0,
      [
        { ts: at(1), text: "a1" },
        { ts: "", text: "a1 continued" },
      ],
      0,
    );
    merger.add(1, [{ ts: at(2), text: "b2" }], 0);
    // Stream 0 might still send a line before 2.
    expect(texts(merger.drain(0))).toEqual(["a1", "a1 continued"]);
    merger.end(0);
    expect(texts(merger.drain(0))).toEqual(["b2"]);
  });

  it("tags each line with its source", () => {
    const merger = new LogMerger(2, 0);
    merger.add(1, [{ ts: at(1), text: "b" }], 0);
    merger.end(0);
    expect(merger.drain(0)).toEqual([{ ts: at(1), text: "b", source: 1 }]);
  });

  it("releases everything past the held cap so a stuck stream cannot hold memory", () => {
    const merger = new LogMerger(2, 0, { maxHeld: 10 });
    merger.add(
      0,
      Array.from({ length: 11 }, (_, index) => ({ ts: at(index), text: `a${index}` })),
      0,
    );
    expect(merger.drain(0)).toHaveLength(11);
    expect(merger.pending).toBe(0);
  });

  it("merges many interleaved streams in order", () => {
    const streams = 5;
    const merger = new LogMerger(streams, 0, { graceMs: 1_000_000 });
    const expected: string[] = [];
    for (let second = 0; second < 50; second++) expected.push(`s${second % streams}-${second}`);
    // Each stream sends its own lines in order, in batches, interleaved irregularly.
    for (let round = 0; round < 10; round++)
      for (let source = streams - 1; source >= 0; source--) {
        const lines = [];
        for (let second = round * 5; second < round * 5 + 5; second++)
          if (second % streams === source) lines.push({ ts: at(second), text: `s${source}-${second}` });
        merger.add(source, lines, round);
      }
    const released = texts(merger.drain(10));
    for (let source = 0; source < streams; source++) merger.end(source);
    released.push(...texts(merger.drain(10)));
    expect(released).toEqual(expected);
  });
});
