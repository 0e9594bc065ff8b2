import { createPrivateKey, X509Certificate } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, parseEnv } from "@/server/env";
import {
  ensureGatewayTls,
  GATEWAY_LEAF_RENEW_BEFORE_DAYS,
  GATEWAY_LEAF_VALIDITY_DAYS,
  kubeconfigCa,
  loadGatewayTlsFiles,
  reachesListenerDirectly,
} from "./tls";

const DAY_MS = 86_400_000;
const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-gateway-tls-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe("ensureGatewayTls", () => {
  it("generates a CA and a serving certificate for localhost and 127.0.0.1 that verifies against it", async () => {
    const stateDir = tempDir();
    const tls = await ensureGatewayTls({ stateDir });
    expect(tls).toMatchObject({ source: "generated", issued: ["ca", "serving"] });
    const leaf = new X509Certificate(tls.cert);
    const ca = new X509Certificate(tls.caPem as string);
    expect(leaf.subjectAltName).toBe("DNS:localhost, IP Address:127.0.0.1");
    expect(leaf.ca).toBe(false);
    expect(ca.ca).toBe(true);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkHost("localhost")).toBe("localhost");
    expect(leaf.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(leaf.publicKey.asymmetricKeyDetails).toMatchObject({ namedCurve: "prime256v1" });
    expect(ca.publicKey.asymmetricKeyDetails).toMatchObject({ namedCurve: "prime256v1" });
    expect(leaf.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]); // serverAuth

    const dir = path.join(stateDir, "gateway-tls");
    expect(tls.caFile).toBe(path.join(dir, "ca.crt"));
    expect(fs.readdirSync(dir).sort()).toEqual(["ca.crt", "ca.key", "tls.crt", "tls.key"]);
    expect(fs.statSync(path.join(dir, "ca.key")).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(dir, "tls.key")).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(leaf.checkPrivateKey(createPrivateKey(tls.key))).toBe(true);
  });

  it("reuses what it generated on the next call", async () => {
    const stateDir = tempDir();
    const first = await ensureGatewayTls({ stateDir });
    const second = await ensureGatewayTls({ stateDir });
    expect(second.issued).toEqual([]);
    expect(second).toMatchObject({ cert: first.cert, key: first.key, caPem: first.caPem });
  });

  it("renews the serving certificate when it nears expiry and keeps the CA", async () => {
    const stateDir = tempDir();
    const start = new Date("2026-01-01T00:00:00Z");
    const first = await ensureGatewayTls({ stateDir, now: start });
    const stillFine = new Date(
      start.getTime() + (GATEWAY_LEAF_VALIDITY_DAYS - GATEWAY_LEAF_RENEW_BEFORE_DAYS - 1) * DAY_MS,
    );
    expect((await ensureGatewayTls({ stateDir, now: stillFine })).issued).toEqual([]);

    const nearExpiry = new Date(start.getTime() + (GATEWAY_LEAF_VALIDITY_DAYS - 10) * DAY_MS);
    const renewed = await ensureGatewayTls({ stateDir, now: nearExpiry });
    expect(renewed.issued).toEqual(["serving"]);
    expect(renewed.caPem).toBe(first.caPem);
    expect(renewed.cert).not.toBe(first.cert);
    const leaf = new X509Certificate(renewed.cert);
    expect(leaf.verify(new X509Certificate(first.caPem as string).publicKey)).toBe(true);
    expect(new Date(leaf.validTo).getTime()).toBeGreaterThan(nearExpiry.getTime() + 300 * DAY_MS);
    expect(fs.readFileSync(path.join(stateDir, "gateway-tls", "tls.crt"), "utf8")).toBe(renewed.cert);
  });

  it("re-issues a serving certificate that is missing, damaged or not from its CA, never the CA", async () => {
    const stateDir = tempDir();
    const first = await ensureGatewayTls({ stateDir });
    const dir = path.join(stateDir, "gateway-tls");
    fs.writeFileSync(path.join(dir, "tls.crt"), "garbage");
    expect((await ensureGatewayTls({ stateDir })).issued).toEqual(["serving"]);
    fs.rmSync(path.join(dir, "tls.key"));
    expect((await ensureGatewayTls({ stateDir })).issued).toEqual(["serving"]);
    const other = await ensureGatewayTls({ stateDir: tempDir() });
    fs.writeFileSync(path.join(dir, "tls.crt"), other.cert);
    fs.writeFileSync(path.join(dir, "tls.key"), other.key);
    const fixed = await ensureGatewayTls({ stateDir });
    expect(fixed.issued).toEqual(["serving"]);
    expect(fixed.caPem).toBe(first.caPem);
  });
});

describe("loadGatewayTlsFiles", () => {
  it("serves the operator's files; a self-signed end of the chain becomes the kubeconfig CA", async () => {
    const generated = await ensureGatewayTls({ stateDir: tempDir() });
    const dir = tempDir();
    const [certFile, keyFile] = [path.join(dir, "tls.crt"), path.join(dir, "tls.key")];
    fs.writeFileSync(certFile, generated.cert + (generated.caPem as string));
    fs.writeFileSync(keyFile, generated.key);
    const withRoot = loadGatewayTlsFiles(certFile, keyFile);
    expect(withRoot).toMatchObject({ source: "files", key: generated.key });
    expect(new X509Certificate(withRoot.caPem as string).fingerprint256).toBe(
      new X509Certificate(generated.caPem as string).fingerprint256,
    );
    // A chain without its root leaves verification to the system's CAs.
    fs.writeFileSync(certFile, generated.cert);
    expect(loadGatewayTlsFiles(certFile, keyFile).caPem).toBeUndefined();
  });

  it("refuses unreadable files and a key that does not match, naming the variable", async () => {
    const generated = await ensureGatewayTls({ stateDir: tempDir() });
    const dir = tempDir();
    const certFile = path.join(dir, "tls.crt");
    fs.writeFileSync(certFile, generated.cert);
    expect(() => loadGatewayTlsFiles(path.join(dir, "nope.crt"), certFile)).toThrow(
      /RING0_GATEWAY_TLS_CERT — cannot read .*nope\.crt \(ENOENT\)/,
    );
    const caKey = path.join(generated.caFile as string, "..", "ca.key");
    expect(() => loadGatewayTlsFiles(certFile, caKey)).toThrow(ConfigError);
    expect(() => loadGatewayTlsFiles(certFile, caKey)).toThrow(/RING0_GATEWAY_TLS_KEY — .* is not the key/);
    expect(() => loadGatewayTlsFiles(certFile, certFile)).toThrow(
      /RING0_GATEWAY_TLS_KEY — expected an unencrypted PEM/,
    );
    const empty = path.join(dir, "empty.crt");
    fs.writeFileSync(empty, "");
    expect(() => loadGatewayTlsFiles(empty, caKey)).toThrow(
      /RING0_GATEWAY_TLS_CERT — expected PEM certificates/,
    );
  });
});

describe("kubeconfigCa", () => {
  it("embeds Ring0's own CA only when kubectl reaches the listener directly", async () => {
    const tls = await ensureGatewayTls({ stateDir: tempDir() });
    expect(kubeconfigCa(parseEnv({}), tls)).toBe(tls.caPem);
    expect(kubeconfigCa(parseEnv({ RING0_GATEWAY_URL: "https://127.0.0.1:3443" }), tls)).toBe(tls.caPem);
    expect(kubeconfigCa(parseEnv({ RING0_GATEWAY_URL: "https://ring0.example.com" }), tls)).toBeUndefined();
    expect(
      kubeconfigCa(parseEnv({ RING0_GATEWAY_URL: "https://ring0.example.com" }), { ...tls, source: "files" }),
    ).toBe(tls.caPem);
    expect(reachesListenerDirectly("https://localhost", 443)).toBe(true);
    expect(reachesListenerDirectly("https://localhost:8443", 3443)).toBe(false);
  });
});
