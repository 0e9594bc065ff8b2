/**
 * NetworkPolicies on this host's real nodes (issue 18): kube-router's firewall alone (no routing,
 * no service proxy, no CNI: the bridge plugin and kube-proxy stay), built from the Go module proxy
 * (scripts/netpol-build.sh). It watches the super cluster's NetworkPolicies, pods and namespaces
 * and enforces them with iptables and ipsets in the filter table; the syncer copies each tenant's
 * policies down with its namespaces mapped (server/syncer/network-policies.ts). The wall between
 * tenants (./tenant-wall.ts) runs before it, in the mangle table, so a policy only narrows.
 *
 * Why kube-router: it enforces standard NetworkPolicy with plain iptables and ipsets on any CNI
 * that gives pods routable addresses (here, the bridge plugin), runs as one process per node, and
 * builds from the module proxy. The others do not fit this machine kind: kube-network-policies
 * needs nfqueue (not in this kernel), Cilium and Calico's eBPF data planes need BPF features and
 * their own CNI, Antrea needs Open vSwitch. The advisory against kube-router v2.1.0
 * (GHSA-phqm-jgc3-qf8g) concerns its service proxy, which Ring0 never runs.
 *
 * One kube-router per host, for the first real node (it programs the host's one iptables, as
 * kube-proxy does); its pod chains cover that node's pods.
 */
import fs from "node:fs";
import path from "node:path";
import { type KubeObject, serverSideApply } from "@/server/k8s/apply";
import type { ClusterConnection } from "@/server/k8s/cluster";
import { ensureDaemon, readDaemonRecord, stopDaemon } from "../daemon";
import { kubeconfigYaml } from "./configs";
import { runHost } from "./host";
import { daemonEnv, type RealNodeContext, writeIfChanged } from "./node";
import { ensureClientPki } from "./pki";
import { networkPolicyPlan, SERVICE_NETWORK } from "./plan";

export const NETWORK_POLICY_USER = "ring0:network-policy";

/** What kube-router's firewall reads in the super cluster, and nothing more. */
export const NETWORK_POLICY_RBAC: KubeObject[] = [
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: NETWORK_POLICY_USER },
    rules: [
      {
        apiGroups: [""],
        resources: ["pods", "namespaces", "nodes", "services", "endpoints"],
        verbs: ["get", "list", "watch"],
      },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["", "events.k8s.io"], resources: ["events"], verbs: ["create", "patch", "update"] },
    ],
  } as KubeObject,
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: NETWORK_POLICY_USER },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: NETWORK_POLICY_USER },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: NETWORK_POLICY_USER }],
  } as KubeObject,
];

/** kube-router's arguments: the firewall only, for `nodeName`, no ports of its own. */
export function kubeRouterArgs(kubeconfig: string, nodeName: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--hostname-override=${nodeName}`,
    "--run-firewall=true",
    "--run-router=false",
    "--run-service-proxy=false",
    "--run-loadbalancer=false",
    "--enable-cni=false",
    `--service-cluster-ip-range=${SERVICE_NETWORK}`,
    "--health-port=0",
    "--metrics-port=0",
    "--iptables-sync-period=1m",
    "--v=1",
  ];
}

/** Whether kube-router's chains are in the host's filter table (it made them: it runs). */
async function chainsExist(): Promise<boolean> {
  try {
    await runHost("iptables", ["-w", "5", "-n", "-L", "KUBE-ROUTER-FORWARD"]);
    return true;
  } catch {
    return false;
  }
}

export async function ensureNetworkPolicyEnforcer(
  stateDir: string,
  context: RealNodeContext & { connection: ClusterConnection; netpolBinDir: string },
  nodeName: string,
): Promise<void> {
  const plan = networkPolicyPlan(stateDir);
  fs.mkdirSync(plan.logs, { recursive: true, mode: 0o700 });
  for (const object of NETWORK_POLICY_RBAC)
    await serverSideApply(context.connection, object, { force: true });
  const client = await ensureClientPki(plan.pki, context.clusterCa, NETWORK_POLICY_USER);
  writeIfChanged(
    plan.kubeconfig,
    kubeconfigYaml({
      server: context.server,
      caFile: context.clusterCa.certFile,
      certFile: client.certFile,
      keyFile: client.keyFile,
      user: NETWORK_POLICY_USER,
    }),
    0o600,
  );
  await ensureDaemon({
    name: "kube-router enforcing NetworkPolicies",
    binary: path.join(context.netpolBinDir, "kube-router"),
    args: kubeRouterArgs(plan.kubeconfig, nodeName),
    env: { ...daemonEnv(context.netpolBinDir, plan.dir), NODE_NAME: nodeName },
    cwd: plan.dir,
    recordFile: plan.record,
    record: { binDir: context.netpolBinDir },
    inputs: [plan.kubeconfig, client.certFile],
    logFile: path.join(plan.logs, "kube-router.log"),
    marker: `${plan.dir}/`,
    ready: chainsExist,
    readyTimeoutMs: 90_000,
  });
}

/** kube-router's own chains in the filter table (its NetworkPolicy controller's). */
const KUBE_ROUTER_CHAIN = /^KUBE-(ROUTER-|POD-FW-|NWPLCY-)/;
/** kube-router's ipsets (pod and policy address sets). */
const KUBE_ROUTER_SET = /^(KUBE-(SRC|DST)-|kube-router)/;

/**
 * Stops kube-router and removes its chains and sets. Its own `--cleanup-config` panics in v2.1.0
 * (the service proxy's cleanup dereferences a controller it never made) and leaves the chains, so
 * Ring0 removes them: the jumps from the built-in chains first, then the chains, then the sets.
 */
export async function removeNetworkPolicyEnforcer(stateDir: string): Promise<void> {
  const plan = networkPolicyPlan(stateDir);
  const recorded = readDaemonRecord(plan.record)?.binDir;
  const binary = typeof recorded === "string" ? path.join(recorded, "kube-router") : "kube-router";
  await stopDaemon({ binary, recordFile: plan.record, marker: `${plan.dir}/` });
  for (const tables of ["iptables", "ip6tables"]) {
    const listing = async (chain?: string) =>
      (await runHost(tables, ["-w", "5", "-t", "filter", "-S", ...(chain ? [chain] : [])])).stdout.split(
        "\n",
      );
    let rules: string[];
    try {
      rules = await listing();
    } catch {
      continue;
    }
    const chains = rules
      .filter((line) => line.startsWith("-N "))
      .map((line) => line.slice(3).trim())
      .filter((chain) => KUBE_ROUTER_CHAIN.test(chain));
    if (chains.length === 0) continue;
    for (const builtin of ["INPUT", "FORWARD", "OUTPUT"]) {
      const appended = (await listing(builtin)).filter((line) => line.startsWith("-A "));
      // From the last, so the numbers of the ones before stay right.
      for (let index = appended.length - 1; index >= 0; index--) {
        const target = /-j (\S+)/.exec(appended[index] as string)?.[1];
        if (target && KUBE_ROUTER_CHAIN.test(target))
          await runHost(tables, ["-w", "5", "-t", "filter", "-D", builtin, String(index + 1)]);
      }
    }
    for (const chain of chains) await runHost(tables, ["-w", "5", "-t", "filter", "-F", chain]);
    for (const chain of chains) await runHost(tables, ["-w", "5", "-t", "filter", "-X", chain]);
  }
  let sets: string[] = [];
  try {
    sets = (await runHost("ipset", ["list", "-n"])).stdout
      .split("\n")
      .filter((name) => KUBE_ROUTER_SET.test(name));
  } catch {
    return;
  }
  for (const set of sets) await runHost("ipset", ["destroy", set]).catch(() => undefined);
}
