import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ensureDaemon, readDaemonRecord, stopDaemon } from "./daemon";
import { hasExited } from "./process";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function daemonIn(dir: string) {
  const input = path.join(dir, "config");
  return {
    input,
    spec: {
      name: "a test daemon serving",
      binary: "/bin/sh",
      // $0 names the dir, so the daemon is recognised as ours by its command line.
      args: ["-c", "sleep 60", `${dir}/daemon`],
      env: { PATH: "/usr/bin:/bin" },
      cwd: dir,
      recordFile: path.join(dir, "daemon.json"),
      logFile: path.join(dir, "daemon.log"),
      marker: `${dir}/`,
      inputs: [input],
      record: { port: 1234 },
      ready: async () => true,
    },
  };
}

describe("ensureDaemon", () => {
  it("keeps a running daemon, restarts it when what it starts from changed, and stops it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-daemon-"));
    dirs.push(dir);
    const { input, spec } = daemonIn(dir);
    fs.writeFileSync(input, "one");
    const first = await ensureDaemon(spec);
    expect(first.started).toBe(true);
    expect(readDaemonRecord(spec.recordFile)).toMatchObject({ pid: first.pid, port: 1234 });

    const again = await ensureDaemon(spec);
    expect(again).toEqual({ pid: first.pid, started: false });

    fs.writeFileSync(input, "two");
    const restarted = await ensureDaemon(spec);
    expect(restarted.started).toBe(true);
    expect(restarted.pid).not.toBe(first.pid);
    expect(hasExited(first.pid)).toBe(true);

    expect(await stopDaemon(spec)).toBe(restarted.pid);
    expect(hasExited(restarted.pid)).toBe(true);
    expect(fs.existsSync(spec.recordFile)).toBe(false);
  });
});
