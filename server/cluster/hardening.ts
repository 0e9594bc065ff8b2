/**
 * The walls of every local kwokctl cluster (the super cluster and each tenant's control plane), as
 * component flags and the PKIs they name. kwokctl alone would leave etcd on plain HTTP with no
 * credentials, kube-apiserver answering anonymous requests, metrics open without credentials and
 * kwok serving a kubelet API (logs, exec on the host) to anyone on 127.0.0.1. With these:
 *   - etcd serves TLS with client-certificate auth only, on its client and peer URLs, from a CA of
 *     its own per cluster; kube-apiserver is its only client, with its own certificate;
 *   - kube-apiserver authenticates anonymous requests only on its health endpoints and /version;
 *   - controller-manager and scheduler serve health without credentials, never metrics;
 *   - kwok serves nothing: the simulated nodes' kubelet API is ring0-simkubelet's (sandboxed exec,
 *     client certificates only), which kube-apiserver calls with a client certificate of its own.
 * Pure apart from the PKI files; the same flags go into kwokctl's componentsPatches at creation
 * and into the saved cluster config of clusters made before.
 */
import fs from "node:fs";
import path from "node:path";
import { ensurePkiDirectory, type PkiEntry } from "@/server/pki/directory";
import type { ComponentFlags } from "./kwokctl-config";

/** The only requests kube-apiserver authenticates as anonymous (probes and version checks). */
export const ANONYMOUS_PATHS = ["/livez", "/readyz", "/healthz", "/version"] as const;

/** What controller-manager and scheduler serve without credentials (their default minus /metrics). */
export const UNAUTHENTICATED_COMPONENT_PATHS = ["/healthz", "/readyz", "/livez"] as const;

/** The organisation of Ring0's vn-agents' kubelet client certificate (the node PKI's). */
export const NODE_PROXY_GROUP = "ring0:node-proxies";

const etcdLayout = {
  cas: { "etcd-ca": "CN=ring0-etcd-ca, O=Ring0" },
  leaves: {
    // Serves clients and, as the single member's peer certificate, itself.
    "etcd-server": {
      issuer: "etcd-ca",
      subject: "CN=etcd",
      usages: ["serverAuth", "clientAuth"],
      dns: ["localhost"],
      ips: ["127.0.0.1"],
    },
    "apiserver-etcd-client": {
      issuer: "etcd-ca",
      subject: "CN=kube-apiserver-etcd-client",
      usages: ["clientAuth"],
    },
  },
} as const;

const nodeLayout = {
  cas: {
    // Signs kubelet serving certificates (ring0-simkubelet's): what kube-apiserver and vn-agents trust.
    "kubelet-ca": "CN=ring0-kubelet-ca, O=Ring0",
    // Signs the only clients a kubelet accepts: kube-apiserver's and the vn-agents'.
    "kubelet-client-ca": "CN=ring0-kubelet-client-ca, O=Ring0",
  },
  leaves: {
    "sim-kubelet": {
      issuer: "kubelet-ca",
      subject: "CN=ring0-simkubelet",
      usages: ["serverAuth"],
      dns: ["localhost"],
      ips: ["127.0.0.1"],
    },
    "apiserver-kubelet-client": {
      issuer: "kubelet-client-ca",
      subject: "CN=kube-apiserver-kubelet-client, O=system:masters",
      usages: ["clientAuth"],
    },
    "vn-agent-kubelet-client": {
      issuer: "kubelet-client-ca",
      subject: `CN=ring0:vn-agent, O=${NODE_PROXY_GROUP}`,
      usages: ["clientAuth"],
    },
  },
} as const;

export type EtcdPki = Record<keyof typeof etcdLayout.cas | keyof typeof etcdLayout.leaves, PkiEntry>;
export type NodePki = Record<keyof typeof nodeLayout.cas | keyof typeof nodeLayout.leaves, PkiEntry>;

/** A cluster's etcd PKI in `<dir>/etcd-pki` (root-only). */
export function ensureEtcdPki(dir: string): Promise<EtcdPki> {
  return ensurePkiDirectory(path.join(dir, "etcd-pki"), etcdLayout);
}

/** The local super cluster's node PKI in `<kwokDir>/node-pki` (root-only). */
export function ensureNodePki(kwokDir: string): Promise<NodePki> {
  return ensurePkiDirectory(path.join(kwokDir, "node-pki"), nodeLayout);
}

/** etcd on TLS with client certificates only, and kube-apiserver as its client. */
export function etcdTlsFlags(ports: { client: number; peer: number }, pki: EtcdPki): ComponentFlags {
  const client = `https://127.0.0.1:${ports.client}`;
  const peer = `https://127.0.0.1:${ports.peer}`;
  const server = pki["etcd-server"];
  const ca = pki["etcd-ca"].certFile;
  return {
    etcd: {
      "listen-client-urls": client,
      "advertise-client-urls": client,
      "listen-peer-urls": peer,
      "initial-advertise-peer-urls": peer,
      "initial-cluster": `node0=${peer}`,
      "client-cert-auth": "true",
      "trusted-ca-file": ca,
      "cert-file": server.certFile,
      "key-file": server.keyFile,
      "peer-client-cert-auth": "true",
      "peer-trusted-ca-file": ca,
      "peer-cert-file": server.certFile,
      "peer-key-file": server.keyFile,
    },
    "kube-apiserver": {
      "etcd-servers": client,
      "etcd-cafile": ca,
      "etcd-certfile": pki["apiserver-etcd-client"].certFile,
      "etcd-keyfile": pki["apiserver-etcd-client"].keyFile,
    },
  };
}

/** kube-apiserver's AuthenticationConfiguration: anonymous requests only on {@link ANONYMOUS_PATHS}. */
export function authenticationConfiguration(): string {
  return [
    "# Written by Ring0 (server/cluster/hardening.ts): anonymous requests are authenticated only on",
    "# these paths; everywhere else they are refused (401), whatever RBAC a tenant binds.",
    "apiVersion: apiserver.config.k8s.io/v1",
    "kind: AuthenticationConfiguration",
    "anonymous:",
    "  enabled: true",
    "  conditions:",
    ...ANONYMOUS_PATHS.map((pathName) => `    - path: ${pathName}`),
    "",
  ].join("\n");
}

/** Writes the AuthenticationConfiguration into `dir` (when it differs) and returns its path. */
export function writeAuthenticationConfiguration(dir: string): string {
  const file = path.join(dir, "authentication-config.yaml");
  const text = authenticationConfiguration();
  let current: string | undefined;
  try {
    current = fs.readFileSync(file, "utf8");
  } catch {
    current = undefined;
  }
  if (current !== text) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(`${file}.tmp`, text, { mode: 0o644 });
    fs.renameSync(`${file}.tmp`, file);
  }
  return file;
}

/** Anonymous only on health; controller-manager (and scheduler, where it runs) without open metrics. */
export function anonymousHealthOnlyFlags(authenticationConfigFile: string): ComponentFlags {
  const paths = UNAUTHENTICATED_COMPONENT_PATHS.join(",");
  return {
    "kube-apiserver": { "authentication-config": authenticationConfigFile },
    "kube-controller-manager": { "authorization-always-allow-paths": paths },
    "kube-scheduler": { "authorization-always-allow-paths": paths },
  };
}

/**
 * One controller manager and one scheduler per local cluster: no leader election. With it, an API
 * server slowed past the renew deadline (10 s; a busy 2-core host) makes them exit for good, and
 * nothing would schedule a pod again.
 */
export function singleInstanceFlags(): ComponentFlags {
  return {
    "kube-controller-manager": { "leader-elect": "false" },
    "kube-scheduler": { "leader-elect": "false" },
  };
}

/**
 * The simulated nodes' kubelet API is ring0-simkubelet's: kube-apiserver calls it with its own
 * client certificate and verifies it against the node PKI's kubelet CA; kwok serves nothing
 * (no server address, no node port, so nodes advertise the port Ring0 writes into their status).
 */
export function simulatedKubeletFlags(pki: NodePki): ComponentFlags {
  return {
    "kube-apiserver": {
      "kubelet-client-certificate": pki["apiserver-kubelet-client"].certFile,
      "kubelet-client-key": pki["apiserver-kubelet-client"].keyFile,
      "kubelet-certificate-authority": pki["kubelet-ca"].certFile,
    },
    "kwok-controller": { "node-port": "0", "server-address": "" },
  };
}

/** Without a component the cluster does not run (a tenant control plane has no scheduler or kwok). */
export function onlyComponents(flags: ComponentFlags, components: readonly string[]): ComponentFlags {
  return Object.fromEntries(
    Object.entries(flags).filter(([component]) => components.includes(component)),
  ) as ComponentFlags;
}

/** kwokctl writes its own CA and admin keys world-readable; Ring0 closes them. */
export function closeKwokctlKeys(pkiDir: string): void {
  try {
    fs.chmodSync(pkiDir, 0o700);
    for (const entry of fs.readdirSync(pkiDir)) {
      if (entry.endsWith(".key")) fs.chmodSync(path.join(pkiDir, entry), 0o600);
    }
  } catch {
    // Not created yet: closed on the next ensure.
  }
}
