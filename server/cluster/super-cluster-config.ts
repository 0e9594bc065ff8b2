/**
 * What kwokctl is told for the local super cluster (./local.ts): the KwokctlConfiguration Ring0
 * writes on every `up` (binaries, 127.0.0.1, ports chosen here), and the walls of ./hardening.ts as
 * component flags — for a new cluster, and put into the saved cluster config of one made before.
 */
import fs from "node:fs";
import {
  anonymousHealthOnlyFlags,
  ensureEtcdPki,
  ensureNodePki,
  etcdTlsFlags,
  simulatedKubeletFlags,
  singleInstanceFlags,
  writeAuthenticationConfiguration,
} from "./hardening";
import {
  type ComponentFlags,
  componentFlagsOf,
  type KwokctlPorts,
  mergeComponentFlags,
  renderKwokctlConfig,
  withAllComponentFlags,
} from "./kwokctl-config";
import { KUBERNETES_SERVICE_ADDRESS, POD_API_ADDRESS } from "./real-node/plan";

/** The ports Ring0 picks for a new super cluster (the API server's too, unless it is fixed). */
export const SUPER_CLUSTER_PORTS = [
  "etcdPort",
  "etcdPeerPort",
  "kwokControllerPort",
  "kubeControllerManagerPort",
  "kubeSchedulerPort",
] as const;

/** Where the super cluster's kwokctl files are. */
export interface SuperClusterFiles {
  /** kwokctl's work dir (`<stateDir>/kwok`). */
  kwokDir: string;
  /** The KwokctlConfiguration Ring0 writes. */
  configPath: string;
  /** kwokctl's saved cluster config (`clusters/<name>/kwok.yaml`). */
  savedConfigPath: string;
}

export function writeSuperClusterConfig(
  files: SuperClusterFiles,
  binDir: string,
  apiserverPort: number | undefined,
  ports: KwokctlPorts | null = null,
  flags: ComponentFlags = {},
): void {
  fs.mkdirSync(files.kwokDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(
    files.configPath,
    renderKwokctlConfig({
      workDir: files.kwokDir,
      binDir,
      writer: "server/cluster/local.ts, on every `up`",
      // Pods reach the API server at the `kubernetes` Service, spliced through POD_API_ADDRESS
      // (./real-node/super-api-proxy.ts): its certificate names both (made with the cluster).
      certSans: [KUBERNETES_SERVICE_ADDRESS, POD_API_ADDRESS],
      ports: {
        ...(apiserverPort ? { kubeApiserverPort: apiserverPort } : {}),
        ...(ports ?? {}),
      },
      flags,
    }),
  );
}

/**
 * Every flag of ./hardening.ts for etcd on these ports, plus what Ring0's tests rely on:
 * PodTemplates (unused by Ring0) bypass the watch cache, so tests can watch from a resourceVersion
 * that etcd compaction removed and see the API server's real 410.
 */
export async function superClusterFlags(
  kwokDir: string,
  etcd: { client: number; peer: number },
): Promise<ComponentFlags> {
  return mergeComponentFlags(
    etcdTlsFlags(etcd, await ensureEtcdPki(kwokDir)),
    anonymousHealthOnlyFlags(writeAuthenticationConfiguration(kwokDir)),
    simulatedKubeletFlags(await ensureNodePki(kwokDir)),
    { "kube-apiserver": { "watch-cache-sizes": "podtemplates#0" } },
    // The `kubernetes` Service's endpoint: where real nodes' pods reach the API server, through the
    // proxy that admits Ring0's own pods only (./real-node/super-api-proxy.ts). It listens on
    // 127.0.0.1 alone either way.
    { "kube-apiserver": { "advertise-address": POD_API_ADDRESS } },
    singleInstanceFlags(),
    mixedNodeFlags(),
  );
}

/**
 * Simulated and real nodes side by side: kwok manages only the nodes Ring0 annotates as simulated
 * (it would otherwise take over a real kubelet's Node); the API server reaches a simulated node's
 * kubelet API by its InternalDNS name (localhost, ring0-simkubelet) and a real node's on its node IP
 * (real nodes report no InternalDNS; the node proxy refuses loopback addresses).
 */
export function mixedNodeFlags(): ComponentFlags {
  return {
    "kube-apiserver": { "kubelet-preferred-address-types": "InternalDNS,InternalIP,Hostname" },
    "kwok-controller": {
      "manage-all-nodes": "false",
      "manage-nodes-with-annotation-selector": "kwok.x-k8s.io/node=fake",
    },
  };
}

/** etcd's ports from the saved cluster config (http or https, whichever it was made with). */
export function savedEtcdPorts(text: string): { client: number; peer: number } | undefined {
  const flags = componentFlagsOf(text, "etcd");
  const port = (url: string | undefined) => Number(/:(\d+)$/.exec(url ?? "")?.[1]);
  const client = port(flags?.get("listen-client-urls"));
  const peer = port(flags?.get("listen-peer-urls"));
  return client > 0 && peer > 0 ? { client, peer } : undefined;
}

/**
 * Puts a cluster made before these walls (or with other certificates) behind them: its saved config
 * gets every wanted flag. True when the config changed (a running cluster must be restarted).
 */
export async function hardenSavedConfig(files: SuperClusterFiles): Promise<boolean> {
  const { savedConfigPath } = files;
  const text = fs.readFileSync(savedConfigPath, "utf8");
  const ports = savedEtcdPorts(text);
  if (!ports)
    throw new Error(`${savedConfigPath} names no etcd ports: delete the cluster (npm run cluster:down)`);
  const patched = withAllComponentFlags(text, await superClusterFlags(files.kwokDir, ports));
  if ("missing" in patched) {
    throw new Error(
      `${savedConfigPath} has no ${patched.missing} component: delete the cluster (npm run cluster:down)`,
    );
  }
  if (patched.text === text) return false;
  fs.writeFileSync(savedConfigPath, patched.text);
  return true;
}
