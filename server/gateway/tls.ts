/**
 * The TLS material of the kube gateway's HTTPS listener. kubectl sends a kubeconfig's bearer token
 * only over TLS, so Ring0 serves the gateway on https itself:
 *
 * - with RING0_GATEWAY_TLS_CERT + RING0_GATEWAY_TLS_KEY, those PEM files (read at every load);
 * - otherwise its own CA and a serving certificate for localhost and 127.0.0.1, generated once
 *   into `<stateDir>/gateway-tls/` (keys 0600). The CA is kept for as long as it is usable (a new
 *   one would break every kubeconfig already handed out); the serving certificate is re-issued
 *   when it is missing, not signed by the CA, has other names or nears expiry.
 *
 * Keys are ECDSA P-256 from Node's WebCrypto; certificates are built with @peculiar/x509.
 */
import { createPrivateKey, X509Certificate as NodeX509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ConfigError, type Env } from "@/server/env";
import { type CertificateAndKey, DAY_MS, issueCa, issueLeaf } from "@/server/pki/certificates";

export const GATEWAY_CA_VALIDITY_DAYS = 3650;
export const GATEWAY_LEAF_VALIDITY_DAYS = 365;
/** A serving certificate with less than this left is re-issued on the next load. */
export const GATEWAY_LEAF_RENEW_BEFORE_DAYS = 30;
/** The names the generated serving certificate carries. */
export const GATEWAY_DNS_NAMES = ["localhost"];
export const GATEWAY_IP_ADDRESSES = ["127.0.0.1"];

export interface GatewayTls {
  /** PEM serving certificate (chain) and its PEM private key, for https.createServer. */
  cert: string;
  key: string;
  /**
   * The CA that verifies `cert`: Ring0's own CA, or the self-signed certificate that ends a
   * configured chain. Undefined when the configured chain leaves that to the system's CAs.
   */
  caPem?: string;
  source: "generated" | "files";
  /** Generated: the CA certificate file (for people adding it to a trust store). */
  caFile?: string;
  /** Generated: what this load (re)issued ("ca", "serving"); empty when nothing changed. */
  issued: string[];
}

type Pem = CertificateAndKey;

function issueGatewayCa(now: Date): Promise<Pem> {
  return issueCa({
    name: `CN=Ring0 kube gateway CA ${now.toISOString().slice(0, 10)}, O=Ring0`,
    days: GATEWAY_CA_VALIDITY_DAYS,
    now,
    pathLength: 0,
  });
}

function issueServing(ca: Pem, now: Date): Promise<Pem> {
  return issueLeaf({
    issuer: ca,
    subject: "CN=localhost, O=Ring0",
    usages: ["serverAuth"],
    dns: GATEWAY_DNS_NAMES,
    ips: GATEWAY_IP_ADDRESSES,
    days: GATEWAY_LEAF_VALIDITY_DAYS,
    now,
  });
}

/** Whether `key` is the private key of `cert`. */
function keyMatches(cert: NodeX509Certificate, key: string): boolean {
  try {
    return cert.checkPrivateKey(createPrivateKey(key));
  } catch {
    return false;
  }
}

function caUsable(ca: Pem | undefined, now: Date): ca is Pem {
  if (!ca) return false;
  try {
    const cert = new NodeX509Certificate(ca.cert);
    return cert.ca && new Date(cert.validTo).getTime() > now.getTime() && keyMatches(cert, ca.key);
  } catch {
    return false;
  }
}

function servingStillGood(serving: Pem | undefined, ca: Pem, now: Date): serving is Pem {
  if (!serving) return false;
  try {
    const cert = new NodeX509Certificate(serving.cert);
    const caCert = new NodeX509Certificate(ca.cert);
    if (!cert.checkIssued(caCert) || !cert.verify(caCert.publicKey)) return false;
    if (!keyMatches(cert, serving.key)) return false;
    if (new Date(cert.validTo).getTime() - now.getTime() < GATEWAY_LEAF_RENEW_BEFORE_DAYS * DAY_MS)
      return false;
    const wanted = [
      ...GATEWAY_DNS_NAMES.map((name) => `DNS:${name}`),
      ...GATEWAY_IP_ADDRESSES.map((ip) => `IP Address:${ip}`),
    ].sort();
    const actual = (cert.subjectAltName ?? "")
      .split(",")
      .map((entry) => entry.trim())
      .filter(Boolean)
      .sort();
    return JSON.stringify(wanted) === JSON.stringify(actual);
  } catch {
    return false;
  }
}

function readPair(dir: string, name: string): Pem | undefined {
  try {
    return {
      cert: fs.readFileSync(path.join(dir, `${name}.crt`), "utf8"),
      key: fs.readFileSync(path.join(dir, `${name}.key`), "utf8"),
    };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Key first, then certificate, each written to a temporary file and renamed into place. */
function writePair(dir: string, name: string, pair: Pem): void {
  const write = (file: string, text: string, mode: number) => {
    const target = path.join(dir, file);
    const temporary = `${target}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, text, { mode });
    fs.chmodSync(temporary, mode);
    fs.renameSync(temporary, target);
  };
  write(`${name}.key`, pair.key, 0o600);
  write(`${name}.crt`, pair.cert, 0o644);
}

/** The gateway's own CA and serving certificate in `<stateDir>/gateway-tls/`, created or renewed as needed. */
export async function ensureGatewayTls(options: { stateDir: string; now?: Date }): Promise<GatewayTls> {
  const now = options.now ?? new Date();
  const dir = path.join(options.stateDir, "gateway-tls");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const issued: string[] = [];
  let ca = readPair(dir, "ca");
  if (!caUsable(ca, now)) {
    ca = await issueGatewayCa(now);
    writePair(dir, "ca", ca);
    issued.push("ca");
  }
  let serving = readPair(dir, "tls");
  if (!servingStillGood(serving, ca, now)) {
    serving = await issueServing(ca, now);
    writePair(dir, "tls", serving);
    issued.push("serving");
  }
  return {
    cert: serving.cert,
    key: serving.key,
    caPem: ca.cert,
    source: "generated",
    caFile: path.join(dir, "ca.crt"),
    issued,
  };
}

/** Every certificate in a PEM text, in order. */
function pemCertificates(text: string): NodeX509Certificate[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new NodeX509Certificate(block));
}

/**
 * An operator's certificate (chain) and key. The certificate that ends the chain becomes the CA
 * data of kubeconfigs when it is self-signed (a self-signed certificate, or a chain that includes
 * its private root); a chain up to a public CA leaves verification to the system's CAs.
 */
export function loadGatewayTlsFiles(certFile: string, keyFile: string): GatewayTls {
  const read = (variable: string, file: string) => {
    try {
      return fs.readFileSync(file, "utf8");
    } catch (error) {
      throw new ConfigError(
        `Invalid configuration: ${variable} — cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`,
      );
    }
  };
  const cert = read("RING0_GATEWAY_TLS_CERT", certFile);
  const key = read("RING0_GATEWAY_TLS_KEY", keyFile);
  let chain: NodeX509Certificate[];
  try {
    chain = pemCertificates(cert);
  } catch (error) {
    throw new ConfigError(
      `Invalid configuration: RING0_GATEWAY_TLS_CERT — ${certFile} holds a certificate that does not parse (${(error as Error).message}).`,
    );
  }
  const leaf = chain[0];
  if (!leaf) {
    throw new ConfigError(
      `Invalid configuration: RING0_GATEWAY_TLS_CERT — expected PEM certificates in ${certFile}.`,
    );
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(
      `Invalid configuration: RING0_GATEWAY_TLS_KEY — expected an unencrypted PEM private key in ${keyFile}.`,
    );
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw new ConfigError(
      `Invalid configuration: RING0_GATEWAY_TLS_KEY — ${keyFile} is not the key of the first certificate in ${certFile}.`,
    );
  }
  const last = chain.at(-1) as NodeX509Certificate;
  const selfSigned = last.checkIssued(last) && last.verify(last.publicKey);
  return { cert, key, caPem: selfSigned ? last.toString() : undefined, source: "files", issued: [] };
}

/** The gateway's TLS material as configured: the operator's files, else Ring0's own CA. */
export function loadGatewayTls(config: Env, now?: Date): Promise<GatewayTls> {
  if (config.RING0_GATEWAY_TLS_CERT && config.RING0_GATEWAY_TLS_KEY) {
    return Promise.resolve(loadGatewayTlsFiles(config.RING0_GATEWAY_TLS_CERT, config.RING0_GATEWAY_TLS_KEY));
  }
  return ensureGatewayTls({ stateDir: config.stateDir, now });
}

/** Whether `gatewayUrl` reaches Ring0's own listener directly (localhost or 127.0.0.1, the gateway port). */
export function reachesListenerDirectly(gatewayUrl: string, port: number): boolean {
  const url = new URL(gatewayUrl);
  return ["localhost", "127.0.0.1"].includes(url.hostname) && Number(url.port || 443) === port;
}

/**
 * The CA kubeconfigs embed: a configured certificate's own root always; Ring0's generated CA only
 * when kubectl talks to the listener directly (behind a TLS-terminating proxy the proxy's
 * certificate is what kubectl sees, so the system's CAs decide).
 */
export function kubeconfigCa(config: Env, tls: GatewayTls): string | undefined {
  if (tls.source === "files") return tls.caPem;
  return reachesListenerDirectly(config.gatewayUrl, config.RING0_GATEWAY_PORT) ? tls.caPem : undefined;
}
