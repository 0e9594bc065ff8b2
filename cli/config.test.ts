import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { configPath, readConfig, writeConfig } from "./config";

const token = `r0_${"a".repeat(43)}`;
let dir: string | undefined;
const tmp = () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-cli-config-"));
  return dir;
};
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("CLI config", () => {
  it("lives under XDG_CONFIG_HOME, else ~/.config", () => {
    expect(configPath({ XDG_CONFIG_HOME: "/x", HOME: "/h" })).toBe("/x/ring0/config.json");
    expect(configPath({ HOME: "/h" })).toBe("/h/.config/ring0/config.json");
    expect(configPath({ XDG_CONFIG_HOME: " ", HOME: "/h" })).toBe("/h/.config/ring0/config.json");
  });

  it("is written readable by the user only, and read back", () => {
    const file = path.join(tmp(), "ring0", "config.json");
    expect(readConfig(file)).toBeNull();
    writeConfig(file, { url: "http://r.test", token });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(readConfig(file)).toEqual({ url: "http://r.test", token });
    // An existing, looser file is replaced by a private one.
    fs.chmodSync(file, 0o644);
    writeConfig(file, { url: "http://other.test", token });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it("names a damaged file and says to log in again", () => {
    const file = path.join(tmp(), "config.json");
    fs.writeFileSync(file, "{nope");
    expect(() => readConfig(file)).toThrow(/not valid JSON; run `ring0 login` again/);
    fs.writeFileSync(file, JSON.stringify({ url: "http://r.test", token: "secret" }));
    expect(() => readConfig(file)).toThrow(/damaged \(token: expected a Ring0 API token/);
  });
});
