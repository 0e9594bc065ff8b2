import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

/** Starts the real server entry point and returns what a person would see. */
function start(env: Record<string, string>) {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-start-"));
  try {
    const result = spawnSync(path.resolve("node_modules/.bin/tsx"), ["server.ts"], {
      env: { ...process.env, RING0_STATE_DIR: stateDir, NODE_ENV: "production", ...env },
      encoding: "utf8",
      timeout: 60_000,
    });
    return { status: result.status, stderr: result.stderr.trim() };
  } finally {
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

describe("start-up with bad configuration", () => {
  it("stops with one line naming the variable and what it expects", () => {
    const result = start({ PORT: "eighty" });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('Invalid configuration: PORT — expected a TCP port number (got "eighty").');
  });

  it("names a half-configured external IAM", () => {
    const result = start({ OIDC_ISSUER: "https://iam.example.com", OIDC_CLIENT_ID: "ring0" });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      "Invalid configuration: OIDC_CLIENT_SECRET — required when OIDC_ISSUER is set (unset).",
    );
  });
});
