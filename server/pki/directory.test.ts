import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ensurePkiDirectory } from "./directory";

const layout = {
  cas: { ca: "CN=test-ca" },
  leaves: {
    server: {
      issuer: "ca",
      subject: "CN=server",
      usages: ["serverAuth"],
      dns: ["localhost"],
      ips: ["127.0.0.1"],
    },
    client: { issuer: "ca", subject: "CN=client, O=group", usages: ["clientAuth"] },
  },
} as const;

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-pki-"));
  dirs.push(dir);
  return path.join(dir, "pki");
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe("ensurePkiDirectory", () => {
  it("makes a root-only directory with private keys only root can read", async () => {
    const dir = tempDir();
    const pki = await ensurePkiDirectory(dir, layout);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(pki.client.keyFile).mode & 0o777).toBe(0o600);
    expect(new X509Certificate(pki.server.cert).checkIssued(new X509Certificate(pki.ca.cert))).toBe(true);
  });

  it("keeps what is good, and re-issues a leaf of another CA while keeping the CA", async () => {
    const dir = tempDir();
    const first = await ensurePkiDirectory(dir, layout);
    const again = await ensurePkiDirectory(dir, layout);
    expect(again.server.cert).toBe(first.server.cert);
    expect(again.ca.cert).toBe(first.ca.cert);

    const other = await ensurePkiDirectory(tempDir(), layout);
    fs.writeFileSync(first.client.certFile, other.client.cert);
    fs.writeFileSync(first.client.keyFile, other.client.key);
    const repaired = await ensurePkiDirectory(dir, layout);
    expect(repaired.ca.cert).toBe(first.ca.cert);
    expect(repaired.client.cert).not.toBe(other.client.cert);
    expect(repaired.server.cert).toBe(first.server.cert);
  });
});
