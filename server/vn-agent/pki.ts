/**
 * The vn-agent's own PKI, shared by the agents (which serve with it and verify callers against it),
 * Ring0's admission webhooks (same) and the provisioners (which give each tenant API server its
 * kubelet client certificate and the CA to verify the agents with):
 *   serving-ca.crt/.key   signs the agents' serving certificate (tenant apiservers trust it)
 *   serving.crt/.key      the agents' and webhooks' serving certificate (SANs localhost, 127.0.0.1,
 *                         the pod API address, and where Ring0 in a cluster serves its webhooks)
 *   client-ca.crt/.key    signs tenant apiservers' kubelet client certificates (agents trust only it)
 * Two CAs, so a serving certificate can never pass as a tenant's client certificate and back.
 *
 * Kept in `<stateDir>/vn-agent-pki/` on one machine; Ring0 in a cluster keeps it in one Secret of
 * its namespace (VN_AGENT_PKI_SECRET), made by whichever replica comes first (a create: a replica
 * that loses the race takes the winner's), so every replica and every tenant API server agree on
 * one CA, and a new leader never re-issues certificates.
 */
import { X509Certificate } from "node:crypto";
import fs from "node:fs";
import { isIPv6 } from "node:net";
import path from "node:path";
import { POD_API_ADDRESS } from "@/server/cluster/real-node/plan";
import { createObject, type KubeObject, readObject, replaceObject } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { isAlreadyExists, isConflict, isNotFound } from "@/server/k8s/errors";
import { type CertificateAndKey, DAY_MS, issueCa, issueLeaf } from "@/server/pki/certificates";
import * as x509 from "@/server/pki/x509";
import { TENANT_APISERVER_ORGANIZATION } from "./identity";

/** The agents' serving addresses: loopback for local API servers, the pod API address for ones in pods. */
const SERVING_IPS = ["127.0.0.1", POD_API_ADDRESS];
const SERVING_NAMES = ["localhost"];

/** The Secret of Ring0's namespace that holds the PKI of Ring0 in a cluster (kept by helm uninstall). */
export const VN_AGENT_PKI_SECRET = "ring0-vn-agent-pki";

/** An IP address in one spelling (IPv6 compressed and lowercase, as URLs write it). */
function canonicalIp(ip: string): string {
  if (!isIPv6(ip)) return ip;
  try {
    return new URL(`https://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip.toLowerCase();
  }
}

/** Whether a serving certificate names every address and name it must serve on. */
function namesAll(pair: CertificateAndKey, ips: string[], names: string[]): boolean {
  try {
    const sans = (new X509Certificate(pair.cert).subjectAltName ?? "").split(", ");
    const addresses = new Set(
      sans.filter((san) => san.startsWith("IP Address:")).map((san) => canonicalIp(san.slice(11))),
    );
    return (
      ips.every((ip) => addresses.has(canonicalIp(ip))) && names.every((name) => sans.includes(`DNS:${name}`))
    );
  } catch {
    return false;
  }
}

const CA_DAYS = 3650;
const LEAF_DAYS = 365;
/** Leaves are re-issued once less than this much of their life is left. */
const RENEW_BEFORE_MS = 30 * DAY_MS;

export interface VnAgentPki {
  servingCa: CertificateAndKey;
  clientCa: CertificateAndKey;
  /** The agents' serving certificate (localhost, 127.0.0.1, the pod API address, and `serving`'s). */
  serving: CertificateAndKey;
  /** A kubelet client certificate for a tenant apiserver: CN=<tenant>, O=ring0:tenant-apiserver. */
  issueTenantKubeletClient(tenant: string): Promise<CertificateAndKey>;
}

export function vnAgentPkiDir(stateDir: string): string {
  return path.join(path.resolve(stateDir), "vn-agent-pki");
}

/** Where the PKI is kept: a state dir's files, or a Secret (Ring0 in a cluster). */
export type VnAgentPkiSource =
  | string
  | {
      superCluster: ClusterConnection;
      namespace: string;
      /** More names and addresses the serving certificate must carry (the webhooks' Service). */
      serving?: { ips?: string[]; names?: string[] };
    };

type PkiFiles = Partial<Record<"serving-ca" | "client-ca" | "serving", CertificateAndKey>>;

/** How one source reads and writes the PKI; `save` says false when another writer came first. */
interface PkiStore {
  key: string;
  /** What a stored PKI lacking a CA is called in the error (a Secret is never completed with a new CA). */
  strict?: string;
  extra: { ips: string[]; names: string[] };
  load(): Promise<{ files: PkiFiles; version?: string }>;
  save(files: PkiFiles, version: string | undefined): Promise<boolean>;
}

const PKI_NAMES = ["serving-ca", "client-ca", "serving"] as const;

function fileStore(stateDir: string): PkiStore {
  const dir = vnAgentPkiDir(stateDir);
  const read = (name: string): CertificateAndKey | undefined => {
    try {
      return {
        cert: fs.readFileSync(path.join(dir, `${name}.crt`), "utf8"),
        key: fs.readFileSync(path.join(dir, `${name}.key`), "utf8"),
      };
    } catch {
      return undefined;
    }
  };
  return {
    key: `dir:${dir}`,
    extra: { ips: [], names: [] },
    async load() {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const files: PkiFiles = {};
      for (const name of PKI_NAMES) {
        const pair = read(name);
        if (pair) files[name] = pair;
      }
      return { files };
    },
    async save(files) {
      for (const [name, pair] of Object.entries(files)) {
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
      return true;
    },
  };
}

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

function secretStore(source: Exclude<VnAgentPkiSource, string>): PkiStore {
  const metadata = { name: VN_AGENT_PKI_SECRET, namespace: source.namespace };
  return {
    key: `secret:${source.superCluster.name}/${source.namespace}`,
    strict: `the Secret ${source.namespace}/${VN_AGENT_PKI_SECRET}`,
    extra: { ips: source.serving?.ips ?? [], names: source.serving?.names ?? [] },
    async load() {
      let secret: Secret;
      try {
        secret = await readObject<Secret>(source.superCluster, {
          apiVersion: "v1",
          kind: "Secret",
          metadata,
        });
      } catch (error) {
        if (isNotFound(error)) return { files: {} };
        throw error;
      }
      const text = (key: string) => {
        const value = secret.data?.[key];
        return value ? Buffer.from(value, "base64").toString("utf8") : undefined;
      };
      const files: PkiFiles = {};
      for (const name of PKI_NAMES) {
        const cert = text(`${name}.crt`);
        const key = text(`${name}.key`);
        if (cert && key) files[name] = { cert, key };
      }
      return { files, version: secret.metadata.resourceVersion };
    },
    async save(files, version) {
      const data = Object.fromEntries(
        Object.entries(files).flatMap(([name, pair]) => [
          [`${name}.crt`, Buffer.from(pair.cert).toString("base64")],
          [`${name}.key`, Buffer.from(pair.key).toString("base64")],
        ]),
      );
      const manifest: Secret = {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          ...metadata,
          labels: { "app.kubernetes.io/managed-by": "ring0", "app.kubernetes.io/component": "vn-agent-pki" },
          ...(version ? { resourceVersion: version } : {}),
        },
        type: "Opaque",
        data,
      };
      try {
        // A create when there was none (two replicas starting together: one wins), else a replace
        // of exactly what was read (a renewal by another replica in between: a 409).
        if (version) await replaceObject(source.superCluster, manifest);
        else await createObject(source.superCluster, manifest);
        return true;
      } catch (error) {
        if (isAlreadyExists(error) || isConflict(error)) return false;
        throw error;
      }
    },
  };
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

/**
 * What is stored, completed: a CA is made only when there is none (never replaced), the serving
 * leaf (re)issued when missing, near its end, of another CA or short of a name. Pure but for time
 * and randomness.
 */
async function complete(
  stored: PkiFiles,
  extra: { ips: string[]; names: string[] },
): Promise<{ files: Required<PkiFiles>; changed: boolean }> {
  const now = new Date();
  let changed = false;
  const ca = async (existing: CertificateAndKey | undefined, subject: string) => {
    if (existing) return existing;
    changed = true;
    return issueCa({ name: subject, days: CA_DAYS, now });
  };
  const servingCa = await ca(stored["serving-ca"], "CN=ring0-vn-agent-serving-ca, O=Ring0");
  const clientCa = await ca(stored["client-ca"], "CN=ring0-vn-agent-client-ca, O=Ring0");
  const ips = [...new Set([...SERVING_IPS, ...extra.ips])];
  const names = [...new Set([...SERVING_NAMES, ...extra.names])];
  let serving = stored.serving;
  if (!serving || !(await stillGood(serving, servingCa, now)) || !namesAll(serving, ips, names)) {
    changed = true;
    serving = await issueLeaf({
      issuer: servingCa,
      subject: "CN=ring0-vn-agent",
      usages: ["serverAuth"],
      dns: names,
      ips,
      days: LEAF_DAYS,
      now,
    });
  }
  return { files: { "serving-ca": servingCa, "client-ca": clientCa, serving }, changed };
}

/** The PKI as stored, completed and saved, with no per-process cache (ensureVnAgentPki caches it). */
export function loadVnAgentPki(source: VnAgentPkiSource): Promise<VnAgentPki> {
  return load(storeOf(source));
}

function storeOf(source: VnAgentPkiSource): PkiStore {
  return typeof source === "string" ? fileStore(source) : secretStore(source);
}

async function load(store: PkiStore): Promise<VnAgentPki> {
  // Another writer may come first (a replica starting beside this one): read again and take its.
  for (let attempt = 0; attempt < 5; attempt++) {
    const { files: stored, version } = await store.load();
    // A new CA beside replicas that hold the old one would split them (and every API server's
    // certificate): a Secret that exists keeps its CAs or is refused.
    const missing = (["serving-ca", "client-ca"] as const).filter((name) => !stored[name]);
    if (store.strict && version && missing.length > 0) {
      throw new Error(
        `${store.strict} lacks ${missing.join(" and ")}: restore it, or delete the Secret to start over (every tenant API server's certificate is then issued again)`,
      );
    }
    const { files, changed } = await complete(stored, store.extra);
    if (changed && !(await store.save(files, version))) continue;
    const clientCa = files["client-ca"];
    return {
      servingCa: files["serving-ca"],
      clientCa,
      serving: files.serving,
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
  throw new Error(`the vn-agent PKI (${store.key}) kept changing under this writer; try again`);
}

const loading = new Map<string, Promise<VnAgentPki>>();

/**
 * The vn-agent PKI of a state dir or Secret, created on first use. One load per source and process,
 * so the agents, the webhooks and the provisioner starting together never issue two different CAs.
 */
export function ensureVnAgentPki(source: VnAgentPkiSource): Promise<VnAgentPki> {
  const store = storeOf(source);
  let pending = loading.get(store.key);
  if (!pending) {
    pending = load(store).catch((error: unknown) => {
      loading.delete(store.key);
      throw error;
    });
    loading.set(store.key, pending);
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

/**
 * A serving certificate for one vn-agent pod (the chart's DaemonSet) at its pod address, from the
 * serving CA tenant API servers verify agents with: issued by Ring0, so no agent holds a CA key.
 */
export function issueNodeAgentServing(pki: VnAgentPki, node: string, ip: string): Promise<CertificateAndKey> {
  return issueLeaf({
    issuer: pki.servingCa,
    subject: `CN=ring0-vn-agent:${node}`,
    usages: ["serverAuth"],
    ips: [ip],
    days: LEAF_DAYS,
    now: new Date(),
  });
}

/** Whether a vn-agent pod's serving certificate is the serving CA's, names `ip` and has > 30 days left. */
export async function nodeAgentServingGood(
  pair: CertificateAndKey,
  pki: VnAgentPki,
  ip: string,
  now = new Date(),
): Promise<boolean> {
  return (await stillGood(pair, pki.servingCa, now)) && namesAll(pair, [ip], []);
}
