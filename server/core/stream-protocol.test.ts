import { describe, expect, it } from "vitest";
import {
  advanceResumePoint,
  dropSeen,
  type LogLine,
  logStreamPath,
  normalTimestamp,
  resumeSinceTime,
} from "@/server/core/stream-protocol";

const line = (ts: string, text = ts): LogLine => ({ ts, text });

describe("normalTimestamp", () => {
  it("pads the fraction to nanoseconds so string order is time order", () => {
    expect(normalTimestamp("2025-01-02T03:04:05.1Z")).toBe("2025-01-02T03:04:05.100000000Z");
    expect(normalTimestamp("2025-01-02T03:04:05Z")).toBe("2025-01-02T03:04:05.000000000Z");
    expect(normalTimestamp("2025-01-02T03:04:05.1Z") > normalTimestamp("2025-01-02T03:04:05.12Z")).toBe(
      false,
    );
  });

  it("converts an offset to UTC", () => {
    expect(normalTimestamp("2025-01-02T05:04:05.5+02:00")).toBe("2025-01-02T03:04:05.500000000Z");
    expect(normalTimestamp("2025-01-01T23:30:00-01:00")).toBe("2025-01-02T00:30:00.000000000Z");
  });

  it("leaves what is not a timestamp alone", () => {
    expect(normalTimestamp("")).toBe("");
    expect(normalTimestamp("yesterday")).toBe("yesterday");
  });
});

describe("resumeSinceTime", () => {
  it("asks from the last line's whole second, in UTC (kubelets take seconds only)", () => {
    expect(resumeSinceTime({ ts: "2025-01-02T03:04:05.999999999Z", seenAtTs: 3 })).toBe(
      "2025-01-02T03:04:05Z",
    );
    expect(resumeSinceTime({ ts: "2025-01-02T05:04:05.5+02:00", seenAtTs: 1 })).toBe("2025-01-02T03:04:05Z");
  });
});

describe("advanceResumePoint", () => {
  it("starts at the first batch's newest timestamp and counts the lines at it", () => {
    const point = advanceResumePoint(undefined, [
      line("2025-01-02T03:04:05.1Z"),
      line("2025-01-02T03:04:05.2Z"),
      line("2025-01-02T03:04:05.2Z"),
    ]);
    expect(point).toEqual({ ts: "2025-01-02T03:04:05.200000000Z", seenAtTs: 2 });
  });

  it("keeps counting across batches at the same timestamp and resets on a newer one", () => {
    let point = advanceResumePoint(undefined, [line("2025-01-02T03:04:05.2Z")]);
    point = advanceResumePoint(point, [line("2025-01-02T03:04:05.20Z")]);
    expect(point).toEqual({ ts: "2025-01-02T03:04:05.200000000Z", seenAtTs: 2 });
    point = advanceResumePoint(point, [line("2025-01-02T03:04:06Z")]);
    expect(point).toEqual({ ts: "2025-01-02T03:04:06.000000000Z", seenAtTs: 1 });
  });

  it("ignores lines without a timestamp and nothing at all", () => {
    expect(advanceResumePoint(undefined, [line("")])).toBeUndefined();
    expect(advanceResumePoint(undefined, [])).toBeUndefined();
    const point = { ts: "2025-01-02T03:04:05Z", seenAtTs: 1 };
    expect(advanceResumePoint(point, [line("")])).toEqual({
      ts: "2025-01-02T03:04:05.000000000Z",
      seenAtTs: 1,
    });
  });
});

describe("dropSeen", () => {
  it("drops lines before the point and as many at it as were shown, across frames", () => {
    const point = { ts: "2025-01-02T03:04:05.5Z", seenAtTs: 2 };
    const state = { skippedAtTs: 0 };
    // The resumed stream starts at 03:04:05 (whole second).
    expect(
      dropSeen(point, [line("2025-01-02T03:04:05.1Z"), line("2025-01-02T03:04:05.5Z", "a")], state),
    ).toEqual([]);
    expect(
      dropSeen(point, [line("2025-01-02T03:04:05.500Z", "b"), line("2025-01-02T03:04:05.5Z", "c")], state),
    ).toEqual([line("2025-01-02T03:04:05.5Z", "c")]);
    expect(dropSeen(point, [line("2025-01-02T03:04:06Z")], state)).toEqual([line("2025-01-02T03:04:06Z")]);
  });

  it("keeps lines without a timestamp", () => {
    const state = { skippedAtTs: 0 };
    expect(dropSeen({ ts: "2025-01-02T03:04:05Z", seenAtTs: 1 }, [line("", "no time")], state)).toEqual([
      line("", "no time"),
    ]);
  });

  it("together with advanceResumePoint, a stream cut anywhere and resumed shows every line exactly once", () => {
    // Several lines share timestamps, as fast writers produce.
    const stream: LogLine[] = [];
    for (let second = 0; second < 4; second++)
      for (let index = 0; index < 5; index++)
        stream.push(line(`2025-01-02T03:04:0${second}.${index < 3 ? 1 : 2}Z`, `${second}-${index}`));
    for (let cut = 0; cut <= stream.length; cut++) {
      const shown = stream.slice(0, cut);
      const point = advanceResumePoint(undefined, shown);
      if (!point) {
        expect(cut).toBe(0);
        continue;
      }
      const since = resumeSinceTime(point);
      // What the kubelet returns for sinceTime: every line from that second on.
      const resumed = stream.filter((each) => normalTimestamp(each.ts) >= normalTimestamp(since));
      const state = { skippedAtTs: 0 };
      // Delivered in frames of 3 lines.
      for (let from = 0; from < resumed.length; from += 3)
        shown.push(...dropSeen(point, resumed.slice(from, from + 3), state));
      expect(shown.map((each) => each.text)).toEqual(stream.map((each) => each.text));
    }
  });
});

describe("logStreamPath", () => {
  it("writes flags as 0/1 and leaves out empty fields", () => {
    expect(
      logStreamPath({
        source: "vn-agent",
        node: "n1",
        follow: true,
        previous: false,
        container: "",
        tailLines: 10,
      }),
    ).toBe("/ws/logs?source=vn-agent&node=n1&follow=1&previous=0&tailLines=10");
  });
});
