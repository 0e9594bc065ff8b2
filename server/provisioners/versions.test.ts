import { describe, expect, it } from "vitest";
import { ControlPlaneSpecError } from "./types";
import { availableVersions, resolveVersion } from "./versions";

describe("versions", () => {
  it("reads the version tools/kube builds", () => {
    expect(availableVersions()[0]).toMatch(/^1\.\d+\.\d+$/);
  });

  it("resolves a minor to its newest patch and accepts exact versions", () => {
    expect(resolveVersion("1.36", ["1.36.4"])).toBe("1.36.4");
    expect(resolveVersion("v1.36.4", ["1.36.4"])).toBe("1.36.4");
  });

  it("refuses versions without binaries, naming the available ones", () => {
    for (const requested of ["1.99", "1.3", "1.36.5", "latest", ""]) {
      expect(() => resolveVersion(requested, ["1.36.4"])).toThrow(ControlPlaneSpecError);
    }
    expect(() => resolveVersion("1.99", ["1.36.4"])).toThrow(/binaries for 1\.36\.4/);
  });
});
