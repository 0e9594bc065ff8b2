import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AlreadyRunningError, acquireInstanceLock, loadOrCreateSecrets } from "./state";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-state-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("instance lock", () => {
  it("refuses a second holder while the first is alive, naming it", () => {
    const release = acquireInstanceLock(dir, "http://localhost:3000");
    // Pretend another live process (our parent) holds it.
    fs.writeFileSync(
      path.join(dir, "ring0.lock"),
      JSON.stringify({ pid: process.ppid, url: "http://localhost:3000" }),
    );
    expect(() => acquireInstanceLock(dir, "http://localhost:3000")).toThrowError(AlreadyRunningError);
    expect(() => acquireInstanceLock(dir, "x")).toThrowError(new RegExp(`pid ${process.ppid}`));
    release();
  });

  it("takes over a stale lock left by a dead process and releases it", () => {
    fs.writeFileSync(path.join(dir, "ring0.lock"), JSON.stringify({ pid: 2 ** 22 + 12345 }));
    const release = acquireInstanceLock(dir, "http://localhost:3000");
    expect(JSON.parse(fs.readFileSync(path.join(dir, "ring0.lock"), "utf8")).pid).toBe(process.pid);
    release();
    expect(fs.existsSync(path.join(dir, "ring0.lock"))).toBe(false);
  });
});

describe("generated secrets", () => {
  it("are created once, private, and stable across loads", () => {
    const first = loadOrCreateSecrets(dir);
    expect(first.nextauthSecret.length).toBeGreaterThanOrEqual(32);
    expect(fs.statSync(path.join(dir, "secrets.json")).mode & 0o777).toBe(0o600);
    expect(loadOrCreateSecrets(dir)).toEqual(first);
  });
});
