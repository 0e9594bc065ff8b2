/**
 * The PKI of a tenant control plane that runs as pods in the super cluster: Ring0 is its own
 * certificate authority. Keys are ECDSA P-256 from Node's WebCrypto; certificates are built with
 * @peculiar/x509 (pure JS, no openssl). Two CAs, as kubeadm does: one for the Kubernetes API
 * (serving cert, client certs, cluster signing) and one only for etcd, so no Kubernetes client
 * certificate can ever talk to etcd directly.
 *
 * `ensurePki` is the only entry point that issues: it keeps every CA it is given, and re-issues a
 * leaf only when it is missing, not signed by the current CA, near expiry or has the wrong names.
 */
import { X509Certificate as NodeX509Certificate } from "node:crypto";
import * as x509 from "./pki-x509";

// Node's WebCrypto (globalThis.crypto): keys never leave Node's own crypto implementation.
x509.cryptoProvider.set(globalThis.crypto);

const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY_MS = 24 * 60 * 60 * 1000;
const CA_VALIDITY_DAYS = 3650;
const LEAF_VALIDITY_DAYS = 365;
/** A leaf with less than this left is re-issued on the next ensure (pods roll with the new one). */
export const RENEW_BEFORE_DAYS = 30;

/** PEM certificate and its PEM (PKCS#8) private key. */
export interface CertificateAndKey {
  cert: string;
  key: string;
}

export interface ControlPlanePki {
  /** Signs the API server's serving cert and every Kubernetes client cert; the cluster signer. */
  ca: CertificateAndKey;
  apiserver: CertificateAndKey;
  /** CN=ring0-admin, O=system:masters: Ring0's own admin identity. */
  admin: CertificateAndKey;
  /** CN=system:kube-controller-manager. */
  controllerManager: CertificateAndKey;
  /** Service-account token signing key pair (PEM PKCS#8 private, SPKI public). */
  serviceAccount: { privateKey: string; publicKey: string };
  /** Signs etcd's serving cert and the API server's etcd client cert, nothing else. */
  etcdCa: CertificateAndKey;
  etcdServer: CertificateAndKey;
  apiserverEtcdClient: CertificateAndKey;
}

/** The names the certificates must carry. */
export interface PkiNames {
  tenant: string;
  /** DNS SANs of the API server serving cert (service names, localhost). */
  apiserverDnsNames: string[];
  apiserverIpAddresses: string[];
  etcdDnsNames: string[];
  etcdIpAddresses: string[];
}

type LeafName = "apiserver" | "admin" | "controllerManager" | "etcdServer" | "apiserverEtcdClient";

interface LeafProfile {
  issuer: "ca" | "etcdCa";
  subject: string;
  usages: ("serverAuth" | "clientAuth")[];
  dns?: string[];
  ips?: string[];
}

function leafProfiles(names: PkiNames): Record<LeafName, LeafProfile> {
  return {
    apiserver: {
      issuer: "ca",
      subject: "CN=kube-apiserver",
      usages: ["serverAuth"],
      dns: names.apiserverDnsNames,
      ips: names.apiserverIpAddresses,
    },
    admin: { issuer: "ca", subject: "CN=ring0-admin, O=system:masters", usages: ["clientAuth"] },
    controllerManager: { issuer: "ca", subject: "CN=system:kube-controller-manager", usages: ["clientAuth"] },
    etcdServer: {
      issuer: "etcdCa",
      subject: "CN=etcd",
      usages: ["serverAuth", "clientAuth"],
      dns: names.etcdDnsNames,
      ips: names.etcdIpAddresses,
    },
    apiserverEtcdClient: {
      issuer: "etcdCa",
      subject: "CN=kube-apiserver-etcd-client",
      usages: ["clientAuth"],
    },
  };
}

const leafNames: LeafName[] = [
  "apiserver",
  "admin",
  "controllerManager",
  "etcdServer",
  "apiserverEtcdClient",
];

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await globalThis.crypto.subtle.generateKey(algorithm, true, ["sign", "verify"])) as CryptoKeyPair;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await globalThis.crypto.subtle.exportKey("pkcs8", key);
  return `${x509.PemConverter.encode(der, "PRIVATE KEY")}\n`;
}

async function publicKeyPem(key: CryptoKey): Promise<string> {
  const der = await globalThis.crypto.subtle.exportKey("spki", key);
  return `${x509.PemConverter.encode(der, "PUBLIC KEY")}\n`;
}

async function importSigningKey(pem: string): Promise<CryptoKey> {
  return globalThis.crypto.subtle.importKey("pkcs8", x509.PemConverter.decodeFirst(pem), algorithm, false, [
    "sign",
  ]);
}

function validity(now: Date, days: number) {
  // Backdated a little so a control plane whose clock lags Ring0's accepts the certs at once.
  return {
    notBefore: new Date(now.getTime() - 5 * 60 * 1000),
    notAfter: new Date(now.getTime() + days * DAY_MS),
  };
}

async function issueCa(commonName: string, now: Date): Promise<CertificateAndKey> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${commonName}, O=Ring0`,
    keys,
    signingAlgorithm: algorithm,
    ...validity(now, CA_VALIDITY_DAYS),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: `${cert.toString("pem")}\n`, key: await privateKeyPem(keys.privateKey) };
}

async function issueLeaf(
  profile: LeafProfile,
  issuer: CertificateAndKey,
  now: Date,
): Promise<CertificateAndKey> {
  const keys = await generateKeys();
  const issuerCert = new x509.X509Certificate(issuer.cert);
  const altNames: x509.JsonGeneralName[] = [
    ...(profile.dns ?? []).map((value) => ({ type: "dns" as const, value })),
    ...(profile.ips ?? []).map((value) => ({ type: "ip" as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    subject: profile.subject,
    issuer: issuerCert.subject,
    publicKey: keys.publicKey,
    signingKey: await importSigningKey(issuer.key),
    signingAlgorithm: algorithm,
    ...validity(now, LEAF_VALIDITY_DAYS),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(profile.usages.map((usage) => x509.ExtendedKeyUsage[usage])),
      ...(altNames.length > 0 ? [new x509.SubjectAlternativeNameExtension(altNames)] : []),
      await x509.AuthorityKeyIdentifierExtension.create(issuerCert.publicKey),
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

/** Whether an existing leaf can stay: signed by `issuer`, names as wanted, not near expiry. */
function leafStillGood(
  existing: CertificateAndKey | undefined,
  profile: LeafProfile,
  issuer: CertificateAndKey,
  now: Date,
): boolean {
  if (!existing?.cert || !existing.key) return false;
  try {
    const cert = new NodeX509Certificate(existing.cert);
    const ca = new NodeX509Certificate(issuer.cert);
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return false;
    if (new Date(cert.validTo).getTime() - now.getTime() < RENEW_BEFORE_DAYS * DAY_MS) return false;
    const wanted = new Set([
      ...(profile.dns ?? []).map((name) => `DNS:${name}`),
      ...(profile.ips ?? []).map((ip) => `IP Address:${ip}`),
    ]);
    const actual = subjectAltNames(cert);
    return wanted.size === actual.size && [...wanted].every((name) => actual.has(name));
  } catch {
    return false;
  }
}

function caStillGood(existing: CertificateAndKey | undefined): existing is CertificateAndKey {
  if (!existing?.cert || !existing.key) return false;
  try {
    return new NodeX509Certificate(existing.cert).ca;
  } catch {
    return false;
  }
}

/**
 * A complete PKI for `names`, keeping everything in `existing` that is still good. CAs are never
 * replaced once present (a replaced CA would lock out every client); `issued` lists what was
 * (re)generated, empty when nothing changed.
 */
export async function ensurePki(
  names: PkiNames,
  existing: Partial<ControlPlanePki> = {},
  now: Date = new Date(),
): Promise<{ pki: ControlPlanePki; issued: string[] }> {
  const issued: string[] = [];
  const keepOrIssueCa = async (name: "ca" | "etcdCa", commonName: string) => {
    const current = existing[name];
    if (caStillGood(current)) return current;
    issued.push(name);
    return issueCa(commonName, now);
  };
  const ca = await keepOrIssueCa("ca", `${names.tenant}-ca`);
  const etcdCa = await keepOrIssueCa("etcdCa", `${names.tenant}-etcd-ca`);
  const issuers = { ca, etcdCa };
  const profiles = leafProfiles(names);
  const leaves = {} as Record<LeafName, CertificateAndKey>;
  for (const name of leafNames) {
    const profile = profiles[name];
    const issuer = issuers[profile.issuer];
    const current = existing[name];
    if (current && leafStillGood(current, profile, issuer, now)) {
      leaves[name] = current;
    } else {
      issued.push(name);
      leaves[name] = await issueLeaf(profile, issuer, now);
    }
  }
  let serviceAccount = existing.serviceAccount;
  if (!serviceAccount?.privateKey || !serviceAccount.publicKey) {
    issued.push("serviceAccount");
    const keys = await generateKeys();
    serviceAccount = {
      privateKey: await privateKeyPem(keys.privateKey),
      publicKey: await publicKeyPem(keys.publicKey),
    };
  }
  return { pki: { ca, etcdCa, ...leaves, serviceAccount }, issued };
}

/** Secret data keys: the file names the control plane's pods mount. */
export const pkiFiles = {
  caCert: "ca.crt",
  caKey: "ca.key",
  apiserverCert: "apiserver.crt",
  apiserverKey: "apiserver.key",
  adminCert: "admin.crt",
  adminKey: "admin.key",
  controllerManagerCert: "controller-manager.crt",
  controllerManagerKey: "controller-manager.key",
  serviceAccountKey: "sa.key",
  serviceAccountPub: "sa.pub",
  etcdCaCert: "etcd-ca.crt",
  etcdCaKey: "etcd-ca.key",
  etcdServerCert: "etcd-server.crt",
  etcdServerKey: "etcd-server.key",
  apiserverEtcdClientCert: "apiserver-etcd-client.crt",
  apiserverEtcdClientKey: "apiserver-etcd-client.key",
} as const;

const pairs: [LeafName | "ca" | "etcdCa", string, string][] = [
  ["ca", pkiFiles.caCert, pkiFiles.caKey],
  ["etcdCa", pkiFiles.etcdCaCert, pkiFiles.etcdCaKey],
  ["apiserver", pkiFiles.apiserverCert, pkiFiles.apiserverKey],
  ["admin", pkiFiles.adminCert, pkiFiles.adminKey],
  ["controllerManager", pkiFiles.controllerManagerCert, pkiFiles.controllerManagerKey],
  ["etcdServer", pkiFiles.etcdServerCert, pkiFiles.etcdServerKey],
  ["apiserverEtcdClient", pkiFiles.apiserverEtcdClientCert, pkiFiles.apiserverEtcdClientKey],
];

/** PEM files by Secret data key (plain text; base64 is the Secret writer's business). */
export function pkiToFiles(pki: ControlPlanePki): Record<string, string> {
  const files: Record<string, string> = {
    [pkiFiles.serviceAccountKey]: pki.serviceAccount.privateKey,
    [pkiFiles.serviceAccountPub]: pki.serviceAccount.publicKey,
  };
  for (const [name, certFile, keyFile] of pairs) {
    files[certFile] = pki[name].cert;
    files[keyFile] = pki[name].key;
  }
  return files;
}

/** Whatever of a PKI the files hold (missing entries stay undefined, for `ensurePki` to fill). */
export function pkiFromFiles(files: Record<string, string | undefined>): Partial<ControlPlanePki> {
  const pki: Partial<ControlPlanePki> = {};
  for (const [name, certFile, keyFile] of pairs) {
    const cert = files[certFile];
    const key = files[keyFile];
    if (cert && key) pki[name] = { cert, key };
  }
  const privateKey = files[pkiFiles.serviceAccountKey];
  const publicKey = files[pkiFiles.serviceAccountPub];
  if (privateKey && publicKey) pki.serviceAccount = { privateKey, publicKey };
  return pki;
}
