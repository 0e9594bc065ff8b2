/**
 * Issuing X.509 certificates for Ring0's own PKIs (tenant control planes of the `kubernetes`
 * provisioner, the kube gateway's HTTPS listener). Keys are ECDSA P-256 from Node's WebCrypto,
 * certificates are built with @peculiar/x509 (pure JS, no openssl). Callers decide names, lifetimes
 * and when to re-issue; this module only issues.
 */
import { createPrivateKey, X509Certificate as NodeX509Certificate, randomBytes } from "node:crypto";
import * as x509 from "@/server/pki/x509";

// Node's WebCrypto (globalThis.crypto): keys never leave Node's own crypto implementation.
x509.cryptoProvider.set(globalThis.crypto);

export const signingAlgorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
export const DAY_MS = 24 * 60 * 60 * 1000;

/** PEM certificate and its PEM (PKCS#8) private key. */
export interface CertificateAndKey {
  cert: string;
  key: string;
}

export async function generateKeys(): Promise<CryptoKeyPair> {
  return (await globalThis.crypto.subtle.generateKey(signingAlgorithm, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
}

export async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await globalThis.crypto.subtle.exportKey("pkcs8", key);
  return `${x509.PemConverter.encode(der, "PRIVATE KEY")}\n`;
}

export async function publicKeyPem(key: CryptoKey): Promise<string> {
  const der = await globalThis.crypto.subtle.exportKey("spki", key);
  return `${x509.PemConverter.encode(der, "PUBLIC KEY")}\n`;
}

const rsaSigningAlgorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

/**
 * An issuer's key for signing, with the algorithm it signs with: Ring0's own CAs are ECDSA P-256
 * (PKCS#8); kwokctl's cluster CA is RSA (PKCS#1), which real nodes' client certificates come from.
 */
async function importSigningKey(
  pem: string,
): Promise<{ key: CryptoKey; algorithm: typeof signingAlgorithm | typeof rsaSigningAlgorithm }> {
  const parsed = createPrivateKey(pem);
  const algorithm = parsed.asymmetricKeyType === "rsa" ? rsaSigningAlgorithm : signingAlgorithm;
  const pkcs8 = parsed.export({ type: "pkcs8", format: "der" });
  const key = await globalThis.crypto.subtle.importKey("pkcs8", pkcs8, algorithm, false, ["sign"]);
  return { key, algorithm };
}

function validity(now: Date, days: number) {
  // Backdated a little so a peer whose clock lags accepts a fresh certificate at once.
  return {
    notBefore: new Date(now.getTime() - 5 * 60 * 1000),
    notAfter: new Date(now.getTime() + days * DAY_MS),
  };
}

/** A random positive 128-bit serial number (hex). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f;
  return bytes.toString("hex");
}

export interface CaOptions {
  /** Distinguished name, e.g. "CN=ring0-acme-ca, O=Ring0". */
  name: string;
  days: number;
  now: Date;
  /** Maximum number of intermediate CAs below this one (undefined: no limit). */
  pathLength?: number;
}

export async function issueCa(options: CaOptions): Promise<CertificateAndKey> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: options.name,
    keys,
    signingAlgorithm,
    ...validity(options.now, options.days),
    extensions: [
      new x509.BasicConstraintsExtension(true, options.pathLength, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: `${cert.toString("pem")}\n`, key: await privateKeyPem(keys.privateKey) };
}

export interface LeafOptions {
  issuer: CertificateAndKey;
  /** Distinguished name, e.g. "CN=system:kube-controller-manager". */
  subject: string;
  usages: ("serverAuth" | "clientAuth")[];
  dns?: string[];
  ips?: string[];
  days: number;
  now: Date;
}

/**
 * The leaf's authority key identifier: the issuer's own subject key identifier when it has one
 * (kwokctl's CA computes it its own way, and a mismatch makes OpenSSL and Node's checkIssued
 * reject the chain), else one computed from its public key.
 */
async function authorityKeyIdentifier(
  issuer: x509.X509Certificate,
): Promise<x509.AuthorityKeyIdentifierExtension> {
  const own = issuer.getExtension(x509.SubjectKeyIdentifierExtension);
  return own
    ? new x509.AuthorityKeyIdentifierExtension(own.keyId)
    : x509.AuthorityKeyIdentifierExtension.create(issuer.publicKey);
}

export async function issueLeaf(options: LeafOptions): Promise<CertificateAndKey> {
  const keys = await generateKeys();
  const issuerCert = new x509.X509Certificate(options.issuer.cert);
  const signing = await importSigningKey(options.issuer.key);
  const altNames: x509.JsonGeneralName[] = [
    ...(options.dns ?? []).map((value) => ({ type: "dns" as const, value })),
    ...(options.ips ?? []).map((value) => ({ type: "ip" as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: options.subject,
    issuer: issuerCert.subject,
    publicKey: keys.publicKey,
    signingKey: signing.key,
    signingAlgorithm: signing.algorithm,
    ...validity(options.now, options.days),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(options.usages.map((usage) => x509.ExtendedKeyUsage[usage])),
      ...(altNames.length > 0 ? [new x509.SubjectAlternativeNameExtension(altNames)] : []),
      await authorityKeyIdentifier(issuerCert),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: `${cert.toString("pem")}\n`, key: await privateKeyPem(keys.privateKey) };
}

/** The SANs of a certificate as Node prints them ("DNS:a, IP Address:127.0.0.1"), as a set. */
function subjectAltNames(cert: NodeX509Certificate): Set<string> {
  return new Set(
    (cert.subjectAltName ?? "")
      .split(",")
      .map((entry) => entry.trim())
      .filter(Boolean),
  );
}

/**
 * Whether an existing leaf can stay: signed by `issuer`, with exactly the wanted SANs, and more than
 * `renewBeforeMs` left to live.
 */
export function leafStillGood(
  existing: CertificateAndKey | undefined,
  names: { dns?: readonly string[]; ips?: readonly string[] },
  issuer: CertificateAndKey,
  now: Date,
  renewBeforeMs: number,
): boolean {
  if (!existing?.cert || !existing.key) return false;
  try {
    const cert = new NodeX509Certificate(existing.cert);
    const ca = new NodeX509Certificate(issuer.cert);
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return false;
    if (new Date(cert.validTo).getTime() - now.getTime() < renewBeforeMs) return false;
    const wanted = new Set([
      ...(names.dns ?? []).map((name) => `DNS:${name}`),
      ...(names.ips ?? []).map((ip) => `IP Address:${ip}`),
    ]);
    const actual = subjectAltNames(cert);
    return wanted.size === actual.size && [...wanted].every((name) => actual.has(name));
  } catch {
    return false;
  }
}

/** Whether `existing` is a CA certificate with its key (a CA is never replaced once present). */
export function caStillGood(existing: CertificateAndKey | undefined): existing is CertificateAndKey {
  if (!existing?.cert || !existing.key) return false;
  try {
    return new NodeX509Certificate(existing.cert).ca;
  } catch {
    return false;
  }
}
