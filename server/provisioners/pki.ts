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
import {
  type CertificateAndKey,
  caStillGood,
  DAY_MS,
  generateKeys,
  issueCa,
  issueLeaf,
  leafStillGood,
  privateKeyPem,
  publicKeyPem,
} from "@/server/pki/certificates";

export type { CertificateAndKey };

const CA_VALIDITY_DAYS = 3650;
const LEAF_VALIDITY_DAYS = 365;
/** A leaf with less than this left is re-issued on the next ensure (pods roll with the new one). */
export const RENEW_BEFORE_DAYS = 30;

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
    return issueCa({ name: `CN=${commonName}, O=Ring0`, days: CA_VALIDITY_DAYS, now });
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
    if (current && leafStillGood(current, profile, issuer, now, RENEW_BEFORE_DAYS * DAY_MS)) {
      leaves[name] = current;
    } else {
      issued.push(name);
      leaves[name] = await issueLeaf({ ...profile, issuer, days: LEAF_VALIDITY_DAYS, now });
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
