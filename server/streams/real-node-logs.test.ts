import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { componentLine, realNodeLogProvider } from "./node-logs";

async function read(stream: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

describe("a real node's kubelet and containerd logs", () => {
  it("turn klog and logrus lines into timestamped lines", () => {
    const now = new Date("2026-11-26T01:00:00Z");
    expect(
      componentLine('I1126 00:06:07.123456    7790 kubelet.go:2450] "SyncLoop ADD" pods=["default/t"]', now),
    ).toBe('2026-11-26T00:06:07.123456Z I "SyncLoop ADD" pods=["default/t"] (kubelet.go:2450)');
    expect(
      componentLine('time="2026-11-26T00:06:07.5Z" level=warning msg="cgroup v1 is deprecated"', now),
    ).toBe('2026-11-26T00:06:07.5Z warning msg="cgroup v1 is deprecated"');
    expect(componentLine("Flag --foo has been deprecated", now)).toBe(
      "2026-11-26T01:00:00.000Z Flag --foo has been deprecated",
    );
    expect(componentLine("   ", now)).toBeNull();
  });

  it("are read only for Ring0's real node names, never another path", async () => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-node-logs-"));
    try {
      const logs = path.join(stateDir, "real-nodes", "ring0-real-0", "logs");
      fs.mkdirSync(logs, { recursive: true });
      fs.writeFileSync(
        path.join(logs, "kubelet.log"),
        "I1126 00:06:07.123456    1 a.go:1] one\nI1126 00:06:08.000000    1 a.go:2] two\n",
      );
      const provider = realNodeLogProvider(stateDir, "kubelet");
      const signal = new AbortController().signal;
      const text = await read(await provider("ring0-real-0", { follow: false, tailLines: 1 }, signal));
      expect(text).toMatch(/T00:06:08\.000000Z I two \(a\.go:2\)\n$/);
      for (const node of ["../../etc", "ring0-real-0/../../x", "ring0-node-0", "ring0-real-01"]) {
        await expect(provider(node, { follow: false }, signal)).rejects.toThrow(/not a real node/);
      }
      await expect(provider("ring0-real-1", { follow: false }, signal)).rejects.toThrow(/no kubelet log/);
    } finally {
      fs.rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
