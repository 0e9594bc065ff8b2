import { describe, expect, it } from "vitest";
import { LogBuffer } from "@/components/streams/log-buffer";

const lines = (from: number, count: number) =>
  Array.from({ length: count }, (_, index) => ({ ts: "", text: `line ${from + index}` }));

describe("LogBuffer", () => {
  it("holds lines in order with increasing sequence numbers", () => {
    const buffer = new LogBuffer({ maxLines: 5 });
    buffer.push(lines(0, 3));
    expect(buffer.size).toBe(3);
    expect([...buffer].map((line) => [line.seq, line.text])).toEqual([
      [0, "line 0"],
      [1, "line 1"],
      [2, "line 2"],
    ]);
    expect(buffer.at(1)?.text).toBe("line 1");
    expect(buffer.at(3)).toBeUndefined();
  });

  it("drops the oldest lines past the cap and counts them", () => {
    const buffer = new LogBuffer({ maxLines: 5 });
    for (let batch = 0; batch < 100; batch++) buffer.push(lines(batch * 7, 7));
    expect(buffer.size).toBe(5);
    expect(buffer.dropped).toBe(695);
    expect(buffer.firstSeq).toBe(695);
    expect([...buffer].map((line) => line.text)).toEqual(lines(695, 5).map((line) => line.text));
    expect(buffer.bySeq(694)).toBeUndefined();
    expect(buffer.bySeq(699)?.text).toBe("line 699");
    expect(buffer.heldChars).toBe(5 * "line 699".length);
  });

  it("keeps memory bounded by characters as well", () => {
    const buffer = new LogBuffer({ maxLines: 1000, maxChars: 100, maxLineLength: 1000 });
    buffer.push(Array.from({ length: 30 }, () => ({ ts: "", text: "x".repeat(10) })));
    expect(buffer.heldChars).toBeLessThanOrEqual(100);
    expect(buffer.size).toBe(10);
    expect(buffer.dropped).toBe(20);
  });

  it("cuts an overlong line and says so", () => {
    const buffer = new LogBuffer({ maxLineLength: 4 });
    buffer.push([{ ts: "t", text: "abcdefgh" }]);
    expect(buffer.at(0)?.text).toBe("abcd … [4 more characters cut]");
  });

  it("clears without reusing sequence numbers, and bumps its version on change", () => {
    const buffer = new LogBuffer({ maxLines: 3 });
    const before = buffer.version;
    buffer.push(lines(0, 4));
    expect(buffer.version).toBeGreaterThan(before);
    buffer.clear();
    expect(buffer.size).toBe(0);
    expect(buffer.dropped).toBe(0);
    buffer.push([{ ts: "", text: "after", source: 2 }]);
    expect(buffer.at(0)).toEqual({ seq: 4, ts: "", text: "after", source: 2 });
    const version = buffer.version;
    buffer.push([]);
    expect(buffer.version).toBe(version);
  });

  it("stays flat over a million lines", () => {
    const buffer = new LogBuffer({ maxLines: 50_000 });
    for (let batch = 0; batch < 1_000; batch++) buffer.push(lines(batch * 1_000, 1_000));
    expect(buffer.size).toBe(50_000);
    expect(buffer.dropped).toBe(950_000);
    expect(buffer.at(0)?.text).toBe("line 950000");
    expect(buffer.at(49_999)?.text).toBe("line 999999");
  });
});
