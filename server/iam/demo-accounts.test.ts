import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { demoAccountsRefusal } from "./demo-accounts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-iam-accounts-"));
const demo = path.join(dir, "demo.json");
const hashed = path.join(dir, "hashed.json");
fs.writeFileSync(demo, JSON.stringify({ accounts: [{ username: "operator", password: "ring0-demo" }] }));
fs.writeFileSync(
  hashed,
  JSON.stringify({ accounts: [{ username: "operator", passwordHash: "scrypt$1$2$3$s$h" }] }),
);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("Ring0's IAM on its own, with demo passwords", () => {
  it("refuses to serve them beyond loopback, saying what to set", () => {
    expect(
      demoAccountsRefusal({ IAM_LISTEN_ADDRESS: "0.0.0.0", IAM_ALLOW_DEMO_ACCOUNTS: "false" }, demo),
    ).toMatch(/demo passwords .* IAM_ACCOUNTS_FILE .* IAM_ALLOW_DEMO_ACCOUNTS=true/);
  });

  it("serves them on loopback, or when the operator says it is a trial", () => {
    expect(
      demoAccountsRefusal({ IAM_LISTEN_ADDRESS: "127.0.0.1", IAM_ALLOW_DEMO_ACCOUNTS: "false" }, demo),
    ).toBe(undefined);
    expect(
      demoAccountsRefusal({ IAM_LISTEN_ADDRESS: "0.0.0.0", IAM_ALLOW_DEMO_ACCOUNTS: "true" }, demo),
    ).toBe(undefined);
  });

  it("serves hashed passwords anywhere", () => {
    expect(
      demoAccountsRefusal({ IAM_LISTEN_ADDRESS: "0.0.0.0", IAM_ALLOW_DEMO_ACCOUNTS: "false" }, hashed),
    ).toBe(undefined);
  });

  it("refuses the shipped seed file beyond loopback", () => {
    const seed = path.resolve("server/iam/seed-accounts.json");
    expect(
      demoAccountsRefusal({ IAM_LISTEN_ADDRESS: "0.0.0.0", IAM_ALLOW_DEMO_ACCOUNTS: "false" }, seed),
    ).toBeDefined();
  });
});
