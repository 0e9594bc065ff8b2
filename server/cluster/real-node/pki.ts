/**
 * A real node's certificates: the kubelet's client certificate (system:node:<name> in system:nodes,
 * so the Node authorizer confines it to its own node), its serving certificate for the node IP from
 * the node PKI's kubelet CA (what kube-apiserver verifies, --kubelet-certificate-authority), and
 * kube-proxy's client certificate (system:kube-proxy, bound to system:node-proxier by default) and
 * kube-router's (ring0:network-policy, bound by ./network-policy.ts).
 * Client certificates come from kwokctl's cluster CA, the API server's --client-ca-file.
 */
import fs from "node:fs";
import path from "node:path";
import type { CertificateAndKey } from "@/server/pki/certificates";
import { ensureLeaves, type PkiEntry } from "@/server/pki/directory";
import type { NodePki } from "../hardening";
import type { RealNodePlan } from "./plan";

/** kwokctl's cluster CA (it signs the API server's serving certificate and its client CA). */
export function clusterCa(clusterPkiDir: string): CertificateAndKey & { certFile: string } {
  const certFile = path.join(clusterPkiDir, "ca.crt");
  try {
    return {
      cert: fs.readFileSync(certFile, "utf8"),
      key: fs.readFileSync(path.join(clusterPkiDir, "ca.key"), "utf8"),
      certFile,
    };
  } catch {
    throw new Error(
      `the super cluster's CA is missing in ${clusterPkiDir}: recreate it (npm run cluster:down, then up)`,
    );
  }
}

export interface RealNodePki {
  client: PkiEntry;
  serving: PkiEntry;
}

export function ensureRealNodePki(
  plan: RealNodePlan,
  cluster: CertificateAndKey,
  nodePki: NodePki,
): Promise<RealNodePki> {
  return ensureLeaves(plan.paths.kubeletPki, {
    client: {
      issuer: cluster,
      subject: `CN=system:node:${plan.name}, O=system:nodes`,
      usages: ["clientAuth"],
    },
    serving: {
      issuer: nodePki["kubelet-ca"],
      subject: `CN=${plan.name}`,
      usages: ["serverAuth"],
      dns: [plan.name],
      ips: [plan.nodeIp],
    },
  });
}

/** A client certificate for `user` from the cluster CA (kube-proxy's, kube-router's), kept in `dir`. */
export async function ensureClientPki(
  dir: string,
  cluster: CertificateAndKey,
  user: string,
): Promise<PkiEntry> {
  const { client } = await ensureLeaves(dir, {
    client: { issuer: cluster, subject: `CN=${user}`, usages: ["clientAuth"] },
  });
  return client;
}

export function ensureKubeProxyPki(dir: string, cluster: CertificateAndKey): Promise<PkiEntry> {
  return ensureClientPki(dir, cluster, "system:kube-proxy");
}
