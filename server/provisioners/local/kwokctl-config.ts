/**
 * What kwokctl is told for a tenant's control plane: the arguments that create it, the
 * KwokctlConfiguration Ring0 writes (its binaries, 127.0.0.1, its recorded ports, its flags), and
 * the rewrites of kwokctl's saved cluster config (`clusters/<name>/kwok.yaml`, its `bin/` links and
 * kubeconfigs) that move a stopped cluster to other ports or binaries, keeping etcd's data and the PKI.
 */
import fs from "node:fs";
import path from "node:path";
import { getWebhookEndpoint } from "@/server/admission/registration";
import {
  anonymousHealthOnlyFlags,
  ensureEtcdPki,
  etcdTlsFlags,
  onlyComponents,
  singleInstanceFlags,
  writeAuthenticationConfiguration,
} from "@/server/cluster/hardening";
import {
  type ComponentEnvs,
  type ComponentFlags,
  mergeComponentFlags,
  renderKwokctlConfig,
} from "@/server/cluster/kwokctl-config";
import { POD_API_ADDRESS } from "@/server/cluster/real-node/plan";
import { writeAdmission } from "./admission";
import { writeAuthorization } from "./authorization";
import { LOCAL_COMPONENTS } from "./components";
import { egressPaths, egressSelectorConfig } from "./egress";
import { webhookKubeconfigPath, writeKubeletClient } from "./kubelet-client";
import { readText, type TenantPaths, writeAtomically } from "./paths";
import { type LocalControlPlanePorts, type LocalControlPlaneRecord, PORT_OPTIONS } from "./record";

/**
 * `kwokctl create cluster` arguments of a tenant control plane: the binary runtime, etcd,
 * kube-apiserver and kube-controller-manager only (a tenant has no nodes of its own to schedule
 * to). Benchmarks make their bare baseline with the same arguments, so it cannot drift from this.
 */
export function controlPlaneCreateArgs(kubeconfig?: string): string[] {
  return [
    "create",
    "cluster",
    "--runtime",
    "binary",
    "--disable",
    "kube-scheduler,kwok-controller",
    ...(kubeconfig ? ["--kubeconfig", kubeconfig] : []),
    "--timeout",
    "2m",
  ];
}

/**
 * Move ports in kwokctl's saved cluster config (or a kubeconfig) from old to new numbers. Only the
 * first YAML document (the components and options) is touched, and only numbers in port positions
 * (`127.0.0.1:N`, `port: N`, `…Port: N`, `--…-port=N`).
 */
export function replacePorts(text: string, moves: ReadonlyMap<number, number>): string {
  const separator = /^---$/m.exec(text);
  const head = separator ? text.slice(0, separator.index) : text;
  const rest = separator ? text.slice(separator.index) : "";
  const moved = head.replace(
    /(127\.0\.0\.1:|localhost:|[pP]ort: |-port=)(\d+)(?!\d)/g,
    (match, prefix: string, port: string) => {
      const next = moves.get(Number(port));
      return next === undefined ? match : `${prefix}${next}`;
    },
  );
  return moved + rest;
}

/** Point binary paths in kwokctl's saved cluster config at another bin dir. */
export function replaceBinDir(text: string, from: string, to: string): string {
  return text.split(`${path.resolve(from)}/`).join(`${path.resolve(to)}/`);
}

/** Write the KwokctlConfiguration of a tenant's control plane (`kwok.yaml` in its dir). */
export function writeKwokctlConfig(
  paths: TenantPaths,
  binDir: string,
  ports: LocalControlPlanePorts,
  flags: ComponentFlags = {},
  envs: ComponentEnvs = {},
): void {
  fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  writeAtomically(
    paths.config,
    renderKwokctlConfig({
      workDir: paths.dir,
      binDir,
      writer: "server/provisioners/local/kwokctl-config.ts",
      ports,
      flags,
      envs,
      // Where the tenant's pods reach it (./pod-api.ts), whether real nodes run yet or not.
      certSans: [POD_API_ADDRESS],
    }),
  );
}

/**
 * The apiserver's egress selector (./egress.ts): its `controlplane` and `cluster` egress through
 * Ring0's wall. Service-based webhooks and aggregated APIs are dialled at an endpoint of the
 * Service (a pod IP the wall can check against the super cluster's pods), not at its cluster IP.
 */
function writeEgressSelector(paths: TenantPaths): Record<string, string> {
  const { sockets, config } = egressPaths(paths.dir);
  const text = egressSelectorConfig(sockets);
  if (readText(config) !== text) writeAtomically(config, text);
  return { "egress-selector-config-file": config, "enable-aggregator-routing": "true" };
}

/**
 * Every flag a tenant's control plane runs with: kubelet requests through the vn-agents, Ring0's
 * admission policies from files (./admission.ts), its authorization webhook (./authorization.ts,
 * once Ring0's webhook server listens), the egress wall and the walls of
 * server/cluster/hardening.ts (etcd on TLS with client certificates on the recorded ports,
 * anonymous requests only on health endpoints, no open controller-manager metrics).
 */
export async function wantedFlags(
  vnAgentStateDir: string | undefined,
  tenant: string,
  paths: TenantPaths,
  ports: LocalControlPlanePorts,
): Promise<ComponentFlags> {
  const webhooks = getWebhookEndpoint();
  return mergeComponentFlags(
    { "kube-apiserver": await writeKubeletClient(vnAgentStateDir, tenant, paths) },
    {
      "kube-apiserver": writeAdmission(
        paths.dir,
        vnAgentStateDir ? webhookKubeconfigPath(paths.dir) : undefined,
      ),
    },
    { "kube-apiserver": vnAgentStateDir && webhooks ? writeAuthorization(paths.dir, webhooks) : {} },
    { "kube-apiserver": writeEgressSelector(paths) },
    // Its `kubernetes` Service's endpoints: where its own pods reach it (./pod-api.ts).
    { "kube-apiserver": { "advertise-address": POD_API_ADDRESS } },
    etcdTlsFlags({ client: ports.etcdPort, peer: ports.etcdPeerPort }, await ensureEtcdPki(paths.dir)),
    onlyComponents(anonymousHealthOnlyFlags(writeAuthenticationConfiguration(paths.dir)), LOCAL_COMPONENTS),
    onlyComponents(singleInstanceFlags(), LOCAL_COMPONENTS),
  );
}

/** Rewrite a stopped cluster's saved config (and kubeconfigs) for other ports and/or binaries. */
export function retarget(
  paths: TenantPaths,
  record: LocalControlPlaneRecord,
  next: { ports?: LocalControlPlanePorts; binDir?: string },
): void {
  const ports = next.ports ?? record.ports;
  const binDir = next.binDir ?? record.binDir;
  const moves = new Map(PORT_OPTIONS.map((option) => [record.ports[option], ports[option]]));
  for (const file of [
    paths.clusterConfig,
    path.join(paths.clusterDir, "kubeconfig.yaml"),
    paths.kubeconfig,
  ]) {
    const text = readText(file);
    if (text === undefined) continue;
    let updated = replacePorts(text, moves);
    if (binDir !== record.binDir) updated = replaceBinDir(updated, record.binDir, binDir);
    if (updated !== text) writeAtomically(file, updated);
  }
  // kwokctl runs components through links in clusters/<name>/bin.
  const links = path.join(paths.clusterDir, "bin");
  for (const entry of fs.existsSync(links) ? fs.readdirSync(links) : []) {
    const target = path.join(binDir, entry);
    if (!fs.existsSync(target)) continue;
    fs.rmSync(path.join(links, entry), { force: true });
    fs.symlinkSync(target, path.join(links, entry));
  }
  writeKwokctlConfig(paths, binDir, ports);
}
