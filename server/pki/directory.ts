/**
 * A PKI kept as PEM files in one directory only root can enter (0700; keys 0600): the local world's
 * etcd and node PKIs. CAs are kept forever once made (a new CA would lock out every client); a leaf
 * is re-issued when it is missing, signed by another CA, near expiry or carries other names.
 * One load per directory and process, so components starting together never issue two CAs.
 */
import fs from "node:fs";
import path from "node:path";
import {
  type CertificateAndKey,
  caStillGood,
  DAY_MS,
  issueCa,
  issueLeaf,
  leafStillGood,
} from "./certificates";

const CA_DAYS = 3650;
const LEAF_DAYS = 365;
const RENEW_BEFORE_MS = 30 * DAY_MS;

export interface LeafSpec<Ca extends string> {
  issuer: Ca;
  /** Distinguished name, e.g. "CN=kube-apiserver-etcd-client". */
  subject: string;
  usages: readonly ("serverAuth" | "clientAuth")[];
  dns?: readonly string[];
  ips?: readonly string[];
}

export interface PkiLayout<Ca extends string, Leaf extends string> {
  /** CA name → its distinguished name. */
  cas: Record<Ca, string>;
  leaves: Record<Leaf, LeafSpec<Ca>>;
}

/** A certificate and key, in memory and as the files that hold them. */
export interface PkiEntry extends CertificateAndKey {
  certFile: string;
  keyFile: string;
}

function read(certFile: string, keyFile: string): CertificateAndKey | undefined {
  try {
    return { cert: fs.readFileSync(certFile, "utf8"), key: fs.readFileSync(keyFile, "utf8") };
  } catch {
    return undefined;
  }
}

function writeAtomically(file: string, text: string, mode: number): void {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, text, { mode });
  fs.renameSync(temporary, file);
}

async function load<Ca extends string, Leaf extends string>(
  dir: string,
  layout: PkiLayout<Ca, Leaf>,
): Promise<Record<Ca | Leaf, PkiEntry>> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // A directory made before by someone less careful is closed now.
  fs.chmodSync(dir, 0o700);
  const now = new Date();
  const entries = {} as Record<Ca | Leaf, PkiEntry>;
  const keep = (name: Ca | Leaf, pair: CertificateAndKey, issued: boolean) => {
    const certFile = path.join(dir, `${name}.crt`);
    const keyFile = path.join(dir, `${name}.key`);
    if (issued) {
      writeAtomically(keyFile, pair.key, 0o600);
      writeAtomically(certFile, pair.cert, 0o644);
    }
    entries[name] = { ...pair, certFile, keyFile };
  };
  for (const name of Object.keys(layout.cas) as Ca[]) {
    const existing = read(path.join(dir, `${name}.crt`), path.join(dir, `${name}.key`));
    if (caStillGood(existing)) keep(name, existing, false);
    else keep(name, await issueCa({ name: layout.cas[name], days: CA_DAYS, now }), true);
  }
  for (const name of Object.keys(layout.leaves) as Leaf[]) {
    const spec = layout.leaves[name];
    entries[name] = await leafIn(dir, name, spec, entries[spec.issuer], now);
  }
  return entries;
}

/** The leaf `name` in `dir`, kept when still good for `spec` and `issuer`, else issued anew. */
async function leafIn(
  dir: string,
  name: string,
  spec: Omit<LeafSpec<string>, "issuer">,
  issuer: CertificateAndKey,
  now: Date,
): Promise<PkiEntry> {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  const existing = read(certFile, keyFile);
  if (existing && leafStillGood(existing, spec, issuer, now, RENEW_BEFORE_MS)) {
    return { ...existing, certFile, keyFile };
  }
  const leaf = await issueLeaf({
    subject: spec.subject,
    usages: [...spec.usages],
    dns: spec.dns ? [...spec.dns] : undefined,
    ips: spec.ips ? [...spec.ips] : undefined,
    issuer,
    days: LEAF_DAYS,
    now,
  });
  writeAtomically(keyFile, leaf.key, 0o600);
  writeAtomically(certFile, leaf.cert, 0o644);
  return { ...leaf, certFile, keyFile };
}

/**
 * Leaves in `dir` (0700) signed by CAs kept elsewhere (a real node's certificates, from the cluster's
 * CA and the node PKI's kubelet CA): each kept while still good, else issued anew.
 */
export async function ensureLeaves<Leaf extends string>(
  dir: string,
  leaves: Record<Leaf, Omit<LeafSpec<string>, "issuer"> & { issuer: CertificateAndKey }>,
): Promise<Record<Leaf, PkiEntry>> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  const now = new Date();
  const entries = {} as Record<Leaf, PkiEntry>;
  for (const name of Object.keys(leaves) as Leaf[]) {
    const spec = leaves[name];
    entries[name] = await leafIn(dir, name, spec, spec.issuer, now);
  }
  return entries;
}

const loading = new Map<string, Promise<unknown>>();

/** The PKI in `dir`, made or completed as `layout` says. */
export function ensurePkiDirectory<Ca extends string, Leaf extends string>(
  dir: string,
  layout: PkiLayout<Ca, Leaf>,
): Promise<Record<Ca | Leaf, PkiEntry>> {
  const key = path.resolve(dir);
  const previous = loading.get(key) ?? Promise.resolve();
  // Serialised per directory; each call loads afresh, so a leaf near expiry is renewed by a later call.
  const next = previous.catch(() => undefined).then(() => load(key, layout));
  loading.set(key, next);
  void next
    .finally(() => {
      if (loading.get(key) === next) loading.delete(key);
    })
    .catch(() => undefined);
  return next;
}
