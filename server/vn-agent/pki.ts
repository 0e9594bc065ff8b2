/**
 * The vn-agent's own PKI, kept in `<stateDir>/vn-agent-pki/` and shared by the agents (which serve
 * with it and verify callers against it) and the local provisioner (which gives each tenant
 * apiserver its kubelet client certificate and the CA to verify the agents with):
 *   serving-ca.crt/.key   signs the agents' serving certificate (tenant apiservers trust it)
 *   serving.crt/.key      the agents' serving certificate (SANs localhost, 127.0.0.1, and the pod
 *                         API address, where API servers in pods reach the agents)
 *   client-ca.crt/.key    signs tenant apiservers' kubelet client certificates (agents trust only it)
 * Two CAs, so a serving certificate can never pass as a tenant's client certificate and back.
 */
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { POD_API_ADDRESS } from "@/server/cluster/real-node/plan";
import { type CertificateAndKey, DAY_MS, issueCa, issueLeaf } from "@/server/pki/certificates";
import * as x509 from "@/server/pki/x509";
import { TENANT_APISERVER_ORGANIZATION } from "./identity";

/** The agents' serving addresses: loopback for local API servers, the pod API address for ones in pods. */
const SERVING_IPS = ["127.0.0.1", POD_API_ADDRESS];

/** Whether a serving certificate names every address the agents serve on. */
function namesServingIps(pair: CertificateAndKey): boolean {
  try {
    const names = new X509Certificate(pair.cert).subjectAltName ?? "";
    return SERVING_IPS.every((ip) => names.includes(`IP Address:${ip}`));
  } catch {
    return false;
  }
}

const CA_DAYS = 3650;
const LEAF_DAYS = 365;
/** Leaves are re-issued once less than this much of their life is left. */
const RENEW_BEFORE_MS = 30 * DAY_MS;

export interface VnAgentPki {
  dir: string;
  servingCa: CertificateAndKey;
  clientCa: CertificateAndKey;
  /** The agents' serving certificate (localhost, 127.0.0.1, the pod API address). */
  serving: CertificateAndKey;
  /** A kubelet client certificate for a tenant apiserver: CN=<tenant>, O=ring0:tenant-apiserver. */
  issueTenantKubeletClient(tenant: string): Promise<CertificateAndKey>;
}

export function vnAgentPkiDir(stateDir: string): string {
  return path.join(path.resolve(stateDir), "vn-agent-pki");
}

function read(dir: string, name: string): CertificateAndKey | undefined {
  try {
    return {
      cert: fs.readFileSync(path.join(dir, `${name}.crt`), "utf8"),
      key: fs.readFileSync(path.join(dir, `${name}.key`), "utf8"),
    };
  } catch {
    return undefined;
  }
}

function write(dir: string, name: string, pair: CertificateAndKey): void {
  for (const [suffix, text, mode] of [
    ["key", pair.key, 0o600],
    ["crt", pair.cert, 0o644],
  ] as const) {
    const file = path.join(dir, `${name}.${suffix}`);
    const temporary = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, text, { mode });
    fs.renameSync(temporary, file);
  }
}

/** True while `pair` is signed by `ca` and has more than RENEW_BEFORE_MS to live. */
async function stillGood(pair: CertificateAndKey, ca: CertificateAndKey, now: Date): Promise<boolean> {
  try {
    const cert = new x509.X509Certificate(pair.cert);
    if (cert.notAfter.getTime() - now.getTime() < RENEW_BEFORE_MS) return false;
    return await cert.verify({ publicKey: new x509.X509Certificate(ca.cert).publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}

async function load(stateDir: string): Promise<VnAgentPki> {
  const dir = vnAgentPkiDir(stateDir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const now = new Date();
  const ca = async (name: string, subject: string) => {
    const existing = read(dir, name);
    if (existing) return existing;
    const issued = await issueCa({ name: subject, days: CA_DAYS, now });
    write(dir, name, issued);
    return issued;
  };
  const servingCa = await ca("serving-ca", "CN=ring0-vn-agent-serving-ca, O=Ring0");
  const clientCa = await ca("client-ca", "CN=ring0-vn-agent-client-ca, O=Ring0");
  let serving = read(dir, "serving");
  if (!serving || !(await stillGood(serving, servingCa, now)) || !namesServingIps(serving)) {
    serving = await issueLeaf({
      issuer: servingCa,
      subject: "CN=ring0-vn-agent",
      usages: ["serverAuth"],
      dns: ["localhost"],
      ips: SERVING_IPS,
      days: LEAF_DAYS,
      now,
    });
    write(dir, "serving", serving);
  }
  return {
    dir,
    servingCa,
    clientCa,
    serving,
    issueTenantKubeletClient: (tenant) =>
      issueLeaf({
        issuer: clientCa,
        subject: `CN=${tenant}, O=${TENANT_APISERVER_ORGANIZATION}`,
        usages: ["clientAuth"],
        days: LEAF_DAYS,
        now: new Date(),
      }),
  };
}

const loading = new Map<string, Promise<VnAgentPki>>();

/**
 * The vn-agent PKI of a state dir, created on first use. One load per state dir and process, so the
 * agents and the provisioner starting together never issue two different CAs.
 */
export function ensureVnAgentPki(stateDir: string): Promise<VnAgentPki> {
  const key = vnAgentPkiDir(stateDir);
  let pending = loading.get(key);
  if (!pending) {
    pending = load(stateDir).catch((error: unknown) => {
      loading.delete(key);
      throw error;
    });
    loading.set(key, pending);
  }
  return pending;
}

/** Whether a PEM certificate was issued by `ca` and has more than 30 days left (the provisioner re-issues otherwise). */
export function certificateStillGood(
  pair: CertificateAndKey,
  ca: CertificateAndKey,
  now = new Date(),
): Promise<boolean> {
  return stillGood(pair, ca, now);
}
