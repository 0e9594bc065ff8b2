import { generateKeyPairSync, X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DAY_MS, issueLeaf, leafStillGood } from "./certificates";
import * as x509 from "./x509";

const rsa = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

/** An RSA CA with its key in PKCS#1 and a subject key identifier of its own making, as kwokctl's. */
async function foreignRsaCa() {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: "CN=kwok-ca",
    keys: {
      privateKey: privateKey.toCryptoKey(rsa, false, ["sign"]) as CryptoKey,
      publicKey: publicKey.toCryptoKey(rsa, true, ["verify"]) as CryptoKey,
    },
    signingAlgorithm: rsa,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 30 * DAY_MS),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
      new x509.SubjectKeyIdentifierExtension("28c8f1740a5705f8b34ba7e03ba4ee7c3f9e663d"),
    ],
  });
  return { cert: cert.toString("pem"), key: privateKey.export({ type: "pkcs1", format: "pem" }).toString() };
}

describe("issueLeaf", () => {
  it("signs with an RSA issuer and names it by the issuer's own key identifier, so the leaf is kept", async () => {
    const ca = await foreignRsaCa();
    const now = new Date();
    const leaf = await issueLeaf({
      issuer: ca,
      subject: "CN=system:node:ring0-real-0, O=system:nodes",
      usages: ["clientAuth"],
      days: 7,
      now,
    });
    const issued = new X509Certificate(leaf.cert);
    expect(issued.checkIssued(new X509Certificate(ca.cert))).toBe(true);
    expect(issued.verify(new X509Certificate(ca.cert).publicKey)).toBe(true);
    expect(
      new x509.X509Certificate(leaf.cert).getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId,
    ).toBe("28c8f1740a5705f8b34ba7e03ba4ee7c3f9e663d");
    // Still good on the next `up`: not re-issued (a re-issued kubelet certificate restarts the kubelet).
    expect(leafStillGood(leaf, {}, ca, now, DAY_MS)).toBe(true);
  });
});
