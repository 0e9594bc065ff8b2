import { describe, expect, it } from "vitest";
import { age, bytesInUse, cores, memory } from "./format";

describe("age", () => {
  const now = Date.parse("2026-11-21T12:00:00Z");
  it("uses the largest sensible unit", () => {
    expect(age("2026-11-21T11:59:30Z", now)).toBe("30s");
    expect(age("2026-11-21T11:30:00Z", now)).toBe("30m");
    expect(age("2026-11-21T06:00:00Z", now)).toBe("6h");
    expect(age("2026-11-11T12:00:00Z", now)).toBe("10d");
    expect(age(null, now)).toBe("—");
  });
});

describe("memory", () => {
  it("shows GiB or MiB and leaves unknown formats alone", () => {
    expect(memory("67108864Ki")).toBe("64 GiB");
    expect(memory("512Mi")).toBe("512 MiB");
    expect(memory("1536Mi")).toBe("1.5 GiB");
    expect(memory("64G")).toBe("64G");
    expect(memory(undefined)).toBe("—");
  });
});

describe("usage", () => {
  it("writes cores and bytes as kubectl top does", () => {
    expect(cores(0.25)).toBe("250m");
    expect(cores(0.0004)).toBe("0m");
    expect(cores(1.25)).toBe("1.25");
    expect(cores(2)).toBe("2");
    expect(cores(undefined)).toBe("—");
    expect(bytesInUse(12 * 2 ** 20)).toBe("12 MiB");
    expect(bytesInUse(1.5 * 2 ** 30)).toBe("1.5 GiB");
    expect(bytesInUse(Number.NaN)).toBe("—");
  });
});
