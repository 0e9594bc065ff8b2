import { describe, expect, it } from "vitest";
import { LogBuffer } from "@/components/streams/log-buffer";
import {
  logFileName,
  logText,
  podLabels,
  sourceColour,
  sourcePalette,
} from "@/components/streams/log-export";

describe("logText", () => {
  const buffer = new LogBuffer();
  buffer.push([
    { ts: "2025-01-02T03:04:05.1Z", text: "first", source: 0 },
    { ts: "", text: "no time", source: 1 },
  ]);

  it("writes one line each, with timestamps when shown", () => {
    expect(logText(buffer, { timestamps: false })).toBe("first\nno time\n");
    expect(logText(buffer, { timestamps: true })).toBe("2025-01-02T03:04:05.1Z first\nno time\n");
  });

  it("names the pod of each line in a multi-pod view", () => {
    expect(logText(buffer, { timestamps: false, sourceNames: ["web-1", "web-2"] })).toBe(
      "[web-1] first\n[web-2] no time\n",
    );
  });
});

describe("logFileName", () => {
  it("is safe and stamped", () => {
    expect(logFileName("default/web app", new Date("2025-01-02T03:04:05.678Z"))).toBe(
      "default-web-app-20250102T030405Z.log",
    );
    expect(logFileName("///", new Date("2025-01-02T03:04:05Z"))).toBe("logs-20250102T030405Z.log");
  });
});

describe("sourceColour", () => {
  it("cycles through the palette", () => {
    expect(sourceColour(0)).toBe(sourcePalette[0]);
    expect(sourceColour(sourcePalette.length + 1)).toBe(sourcePalette[1]);
  });
});

describe("podLabels", () => {
  it("names pods by name alone when they share a namespace", () => {
    expect(
      podLabels([
        { namespace: "a", name: "web-1" },
        { namespace: "a", name: "web-2" },
      ]),
    ).toEqual(["web-1", "web-2"]);
    expect(
      podLabels([
        { namespace: "a", name: "web" },
        { namespace: "b", name: "web" },
      ]),
    ).toEqual(["a/web", "b/web"]);
  });
});
