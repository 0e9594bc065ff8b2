/**
 * The wall between tenants' pods on this host's real nodes (issue 18): a pod may open connections
 * to pods of its own tenant only (Services included: they are DNAT-ed to pods before the check),
 * and to its own control plane's API servers when the `kubernetes` provisioner runs that control
 * plane as pods (their port 6443 only: never etcd or the controller manager), unless the operator
 * lets one tenant's pods reach another's (RING0_TENANT_TRAFFIC_ALLOW); a control plane's pods
 * reach only each other, and its API servers also their own tenant's pods (webhooks, aggregated
 * APIs, pods/proxy) and Ring0's server pods on its webhooks' port (quotas); other pods that are
 * no tenant's (the operator's own) reach only each other; Ring0's own server pods (./ring0-pods.ts) reach those and, besides, port 6443 of every
 * control plane's API servers (the gateway, the controllers and the syncer dial them); Ring0's
 * vn-agent pods open no connection to any pod, and only they reach a service of the host: each its
 * own node's kubelet API, nothing else (NODE_AGENTS_CHAIN); control planes' API servers reach them
 * on their kubelet-API port only (kubectl logs and exec). Replies to
 * allowed connections pass. Anything the wall does not know yet (a pod whose address Ring0 has not
 * seen) is dropped.
 *
 * Enforced in the host's mangle table (host-firewall.ts jumps here for pod-network traffic from
 * the bridges), before kube-router's filter chains, so a tenant's NetworkPolicy can only narrow
 * what this wall allows, never widen it. One ipset of pod addresses per tenant, and one for other
 * pods, kept from the super cluster's pods (their tenant label, written by the syncer: never a
 * tenant's word); each set is swapped in whole, so a rewrite never leaves it half full.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { ClusterConnection } from "@/server/k8s/cluster";
import type { Logger } from "@/server/logger";
import {
  APISERVER_NAME,
  APISERVER_PORT,
  CONTROL_PLANE_NAME_LABEL,
  controlPlaneNamespace,
  MANAGED_BY_LABEL,
  TENANT_LABEL,
} from "@/server/provisioners/kubernetes/naming";
import { syncLabels } from "@/server/syncer/contracts";
import type { Json } from "@/server/syncer/synced-kinds";
import { type CachedObject, createWatchCache } from "@/server/syncer/watch-cache";
import { runHost } from "./host";
import {
  FORWARD_CHAIN,
  NODE_AGENTS_CHAIN,
  TENANT_CHAIN_PREFIX,
  TENANTS_CHAIN,
  WALL_TABLE,
} from "./host-firewall";
import { KUBELET_PORT, MAX_REAL_NODES, realNodeIp, realNodeName } from "./plan";
import { type PodAtAddress, RING0_VN_AGENT_POD_PORT, RING0_WEBHOOK_POD_PORT, ring0PodAt } from "./ring0-pods";
import { TENANT_NAME } from "./traffic-allowances";

/** The chain of pods that are no tenant's (the operator's own). */
export const OTHERS_CHAIN = `${TENANT_CHAIN_PREFIX}OTHERS`;
/** The chain of Ring0's own server pods (the operator's too, and more). */
export const RING0_CHAIN = `${TENANT_CHAIN_PREFIX}RING0`;
/** The chain of Ring0's vn-agent pods: they open no connection to any pod. */
export const VN_AGENTS_CHAIN = `${TENANT_CHAIN_PREFIX}VN-AGENTS`;

/** A tenant's chain name (iptables chain names are at most 28 bytes; tenant names are longer). */
export function tenantChain(tenant: string): string {
  return `${TENANT_CHAIN_PREFIX}${createHash("sha256").update(tenant).digest("hex").slice(0, 16)}`;
}

/**
 * The wall's chains for these pod owners (pure): the tenants' chain sends a new connection by its
 * source address to the chain of that pod's owner, which lets it through (out of this table, on
 * to the filter table's NetworkPolicies) to its own pods and those of tenants it may reach, and
 * drops the rest; an address no one owns is dropped. Plain rules, no
 * ipsets: kube-router v2.1 saves and restores every ipset of the host, so a set it did not make
 * would be put back as it was whenever it syncs.
 */
export function tenantWallChains(
  owners: Map<string, string | null>,
  allowances: [string, string][],
  /** The pods of control planes the `kubernetes` provisioner runs (controlPlanePods). */
  controlPlanes: ControlPlanePods = { members: new Map(), apis: new Map() },
  /** The addresses of Ring0's own server pods (ring0Pods().servers). */
  ring0: ReadonlySet<string> = new Set(),
  /** Ring0's vn-agent pods: address → its own node's kubelet address (ring0Pods().vnAgents). */
  vnAgents: ReadonlyMap<string, string> = new Map(),
): Map<string, string[][]> {
  const reaches = new Map<string, string[]>();
  const reach = (from: string, to: string) => reaches.set(from, [...(reaches.get(from) ?? []), to]);
  const reachesEachOther = (one: string, other: string) => {
    reach(one, other);
    reach(other, one);
  };
  for (const [from, to] of allowances) if (from !== to) reach(tenantChain(from), tenantChain(to));
  const byOwner = new Map<string, string[]>();
  for (const [ip, owner] of [...owners.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const member = controlPlanes.members.get(ip);
    const chain =
      owner !== null
        ? tenantChain(owner)
        : member
          ? controlPlanes.apis.get(member)?.includes(ip)
            ? controlPlaneApiChain(member)
            : controlPlaneChain(member)
          : ring0.has(ip)
            ? RING0_CHAIN
            : vnAgents.has(ip)
              ? VN_AGENTS_CHAIN
              : OTHERS_CHAIN;
    byOwner.set(chain, [...(byOwner.get(chain) ?? []), ip]);
  }
  // The operator's pods and Ring0's reach each other (Ring0's database and IdP may be such pods).
  reachesEachOther(OTHERS_CHAIN, RING0_CHAIN);
  for (const tenant of new Set(controlPlanes.members.values())) {
    // A control plane's API servers and its other pods reach each other; the API servers also the
    // tenant's own pods, as a cluster's API server does (webhooks, aggregated APIs, pods/proxy).
    reachesEachOther(controlPlaneChain(tenant), controlPlaneApiChain(tenant));
    reach(controlPlaneApiChain(tenant), tenantChain(tenant));
  }
  const apisByChain = new Map(
    [...controlPlanes.apis.entries()].map(([tenant, ips]) => [tenantChain(tenant), ips] as const),
  );
  // Ring0's pods reach every control plane's API servers (port 6443 only, as tenants their own).
  apisByChain.set(RING0_CHAIN, [...controlPlanes.apis.values()].flat().sort());
  // A control plane's API servers reach Ring0's pods on its webhooks' port only (quotas, access).
  const ring0Webhooks = [...ring0]
    .sort()
    .map((ip) => ["-d", `${ip}/32`, "-p", "tcp", "--dport", String(RING0_WEBHOOK_POD_PORT), "-j", "ACCEPT"]);
  // And the vn-agents on their kubelet-API port only (kubectl logs, exec, port-forward).
  const vnAgentPorts = [...vnAgents.keys()]
    .filter((ip) => byOwnerHas(owners, ip))
    .sort()
    .map((ip) => ["-d", `${ip}/32`, "-p", "tcp", "--dport", String(RING0_VN_AGENT_POD_PORT), "-j", "ACCEPT"]);
  const callsWebhooks = new Set([...controlPlanes.apis.keys()].map(controlPlaneApiChain));
  const chains = new Map<string, string[][]>();
  chains.set(TENANTS_CHAIN, [
    ["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"],
    ...[...byOwner.entries()].flatMap(([chain, ips]) => ips.map((ip) => ["-s", `${ip}/32`, "-j", chain])),
    ["-j", "DROP"],
  ]);
  for (const [chain, ips] of [...byOwner.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    // vn-agents open no connection to any pod, not even to each other.
    const reachable =
      chain === VN_AGENTS_CHAIN
        ? []
        : [...ips, ...(reaches.get(chain) ?? []).flatMap((other) => byOwner.get(other) ?? [])];
    // A tenant's pods reach port 6443 of its own control plane's API servers, nothing more of it.
    const api = (apisByChain.get(chain) ?? []).map((ip) => [
      "-d",
      `${ip}/32`,
      "-p",
      "tcp",
      "--dport",
      String(APISERVER_PORT),
      "-j",
      "ACCEPT",
    ]);
    // ACCEPT ends the wall's table only (the filter table's NetworkPolicies still apply); a RETURN
    // would fall back into the tenants' chain and its final DROP.
    const webhooks = callsWebhooks.has(chain) ? [...ring0Webhooks, ...vnAgentPorts] : [];
    chains.set(chain, [
      ...reachable.map((ip) => ["-d", `${ip}/32`, "-j", "ACCEPT"]),
      ...api,
      ...webhooks,
      ["-j", "DROP"],
    ]);
  }
  // A vn-agent pod to its own node's kubelet API (from the host's INPUT chain); nothing else.
  chains.set(
    NODE_AGENTS_CHAIN,
    [...vnAgents.entries()]
      .filter(([ip]) => byOwnerHas(owners, ip))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([ip, kubelet]) => [
        "-s",
        `${ip}/32`,
        "-d",
        `${kubelet}/32`,
        "-p",
        "tcp",
        "--dport",
        String(KUBELET_PORT),
        "-j",
        "ACCEPT",
      ]),
  );
  return chains;
}

/** Whether `ip` is an address the operator alone holds (podOwners): a vn-agent's, when it is one. */
function byOwnerHas(owners: Map<string, string | null>, ip: string): boolean {
  return owners.get(ip) === null;
}

/**
 * The chain of a tenant's control plane in pods: its pods reach each other only (the controller
 * manager its API server, the API server its etcd), never another control plane, whatever the
 * tenant makes its API server dial.
 */
export function controlPlaneChain(tenant: string): string {
  return tenantChain(`control-plane/${tenant}`);
}

/**
 * The chain of a control plane's API server pods: their control plane's other pods, and their own
 * tenant's pods (any port: the tenant's webhooks, aggregated APIs and pods/proxy), nothing else.
 */
export function controlPlaneApiChain(tenant: string): string {
  return tenantChain(`control-plane-api/${tenant}`);
}

/** Pod address → whose it is (a tenant, or null for the operator's), from the super cluster's pods. */
export function podOwners(pods: Iterable<CachedObject>): Map<string, string | null> {
  const owners = new Map<string, string | null>();
  const inDoubt = new Set<string>();
  for (const pod of pods) {
    const status = pod.status as Json | undefined;
    const spec = pod.spec as Json | undefined;
    const ip = status?.podIP;
    if (typeof ip !== "string" || !isPodAddress(ip) || spec?.hostNetwork) continue;
    if (status?.phase === "Succeeded" || status?.phase === "Failed") continue;
    const labels = (pod.metadata.labels ?? {}) as Record<string, string>;
    // A tenant's pod is one the syncer made (its label and the managed one); any other pod is the
    // operator's, whatever tenant label it carries (the kubernetes provisioner's control planes).
    const tenant = labels[syncLabels.managed] === "true" ? labels[syncLabels.tenant] : undefined;
    const owner = tenant && TENANT_NAME.test(tenant) ? tenant : null;
    // An address two owners claim (one pod leaving, one arriving) is no one's until one is gone.
    if (owners.has(ip) && owners.get(ip) !== owner) inDoubt.add(ip);
    owners.set(ip, owner);
  }
  for (const ip of inDoubt) owners.delete(ip);
  return owners;
}

/** The pods of control planes in pods, by address: whose control plane each is, and each one's API servers. */
export interface ControlPlanePods {
  /** Pod address → the tenant whose control plane it is part of. */
  members: Map<string, string>;
  /** Tenant → its API server pods' addresses (where its pods may dial port 6443). */
  apis: Map<string, string[]>;
}

/**
 * The pods of control planes the `kubernetes` provisioner runs in the super cluster: by Ring0's
 * labels on a pod in that tenant's own control-plane namespace (only Ring0 writes there), never a
 * pod the syncer made, and only at an address `owners` (podOwners) gives the operator, so an
 * address in doubt opens nothing. A pod going away stays a member (its chain reaches only its own
 * control plane: never the operator's pods) but is no API server: no one's way to it opens, and it
 * reaches no tenant pod.
 */
export function controlPlanePods(
  pods: Iterable<CachedObject>,
  owners: Map<string, string | null>,
): ControlPlanePods {
  const members = new Map<string, string>();
  const apis = new Map<string, string[]>();
  for (const pod of pods) {
    const status = pod.status as Json | undefined;
    const ip = status?.podIP;
    if (typeof ip !== "string" || owners.get(ip) !== null) continue;
    const labels = (pod.metadata.labels ?? {}) as Record<string, string>;
    const tenant = labels[TENANT_LABEL];
    if (
      !tenant ||
      !TENANT_NAME.test(tenant) ||
      labels[syncLabels.managed] === "true" ||
      labels[MANAGED_BY_LABEL] !== "ring0" ||
      pod.metadata.namespace !== controlPlaneNamespace(tenant)
    )
      continue;
    // A pod going away stays in its control plane's chain until it is gone (never the operator's
    // while it finishes its last requests), but is no API server anyone may open a connection to.
    members.set(ip, tenant);
    if (labels[CONTROL_PLANE_NAME_LABEL] === APISERVER_NAME && !pod.metadata.deletionTimestamp)
      apis.set(tenant, [...(apis.get(tenant) ?? []), ip].sort());
  }
  return { members, apis };
}

/**
 * The addresses of Ring0's own pods (./ring0-pods.ts): only where `owners` gives the operator, and
 * only an address exactly one pod holds, so a pod going away opens nothing. Its server pods; and
 * its vn-agent pods, each with the address of its own node's kubelet: a real node's, on that node,
 * in that node's pod subnet (an agent anywhere else reaches no kubelet).
 */
export function ring0Pods(
  pods: Iterable<CachedObject>,
  owners: Map<string, string | null>,
): { servers: Set<string>; vnAgents: Map<string, string> } {
  const byAddress = new Map<string, PodAtAddress[]>();
  for (const pod of pods) {
    const ip = (pod.status as Json | undefined)?.podIP;
    if (typeof ip !== "string" || owners.get(ip) !== null) continue;
    byAddress.set(ip, [...(byAddress.get(ip) ?? []), pod as unknown as PodAtAddress]);
  }
  const servers = new Set<string>();
  const vnAgents = new Map<string, string>();
  for (const [ip, here] of byAddress) {
    const component = ring0PodAt(here, ip);
    if (component === "server") servers.add(ip);
    if (component !== "vn-agent") continue;
    // The one running pod ring0PodAt found (finished ones may still list the address).
    const agent = here.find((pod) => pod.status?.phase === "Running" && !pod.spec?.hostNetwork);
    const index = Number(ip.split(".")[2]);
    if (index < MAX_REAL_NODES && agent?.spec?.nodeName === realNodeName(index))
      vnAgents.set(ip, realNodeIp(index));
  }
  return { servers, vnAgents };
}

/** An address of a real node's pod (the pod network, not the pod API address). */
function isPodAddress(ip: string): boolean {
  if (!net.isIPv4(ip)) return false;
  const parts = ip.split(".").map(Number);
  return parts[0] === 10 && parts[1] === 244 && (parts[2] as number) < 255;
}

/** The restore text that writes `chains` (declaring a chain flushes it) into the wall's table. */
export function wallRestoreText(chains: Map<string, string[][]>): string {
  return [
    `*${WALL_TABLE}`,
    ...[...chains.keys()].map((chain) => `:${chain} - [0:0]`),
    ...[...chains.entries()].flatMap(([chain, rules]) =>
      rules.map((rule) => `-A ${chain} ${rule.join(" ")}`),
    ),
    "COMMIT",
    "",
  ].join("\n");
}

export interface TenantWall {
  stop(): void;
  /** Writes the sets and rules now (also done after every change of pods, debounced). */
  sync(): Promise<void>;
}

/**
 * Keeps the wall from the super cluster's pods until stopped; throws when they cannot be listed
 * in time. Stopping leaves the wall as it is (pods keep what they may reach; new pods reach
 * nothing until a Ring0 keeps it again). Before any Ring0 has written it, the wall lets replies
 * through and drops every new connection between pods (host-firewall.ts makes it so).
 */
export async function startTenantWall(options: {
  superCluster: ClusterConnection;
  logger: Logger;
  /** RING0_TENANT_TRAFFIC_ALLOW, parsed. */
  allowances?: [string, string][];
  debounceMs?: number;
  resyncMs?: number;
  /** How long to wait for the first list of pods (default 30 s). */
  listTimeoutMs?: number;
}): Promise<TenantWall> {
  const log = options.logger.child({ component: "tenant-wall" });
  const allowances = options.allowances ?? [];
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let written = "";

  const pods = createWatchCache<CachedObject>(
    options.superCluster,
    { path: "/api/v1/pods" },
    (pod, previous, deleted) => {
      if (deleted) return schedule();
      const relevant = (object?: CachedObject) =>
        JSON.stringify([
          (object?.status as Json | undefined)?.podIP,
          (object?.status as Json | undefined)?.phase,
          object?.metadata.labels,
          object?.metadata.deletionTimestamp,
        ]);
      if (relevant(pod) !== relevant(previous)) schedule();
    },
    (error) => log.debug("watching pods failed", { error: error.message }),
  );

  function schedule(): void {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void sync().catch((error: unknown) => log.warn("writing the tenant wall failed", { error }));
    }, options.debounceMs ?? 100);
  }

  async function write(): Promise<void> {
    const owners = podOwners(pods.values());
    const ring0 = ring0Pods(pods.values(), owners);
    const chains = tenantWallChains(
      owners,
      allowances,
      controlPlanePods(pods.values(), owners),
      ring0.servers,
      ring0.vnAgents,
    );
    const text = wallRestoreText(chains);
    if (text === written) return;
    // No real nodes here (their wall is gone, or not made yet): nothing to write into.
    const installed = await runHost("iptables", [
      "-w",
      "5",
      "-t",
      WALL_TABLE,
      "-n",
      "-L",
      FORWARD_CHAIN,
    ]).then(
      () => true,
      () => false,
    );
    if (!installed) {
      written = "";
      return;
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-tenant-wall-"));
    try {
      const file = path.join(dir, "rules");
      fs.writeFileSync(file, text, { mode: 0o600 });
      await runHost("iptables-restore", ["-w", "5", "--noflush", file]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    // Chains of owners with no pod left here, now that nothing jumps to them.
    const listed = (await runHost("iptables", ["-w", "5", "-t", WALL_TABLE, "-S"])).stdout.split("\n");
    for (const line of listed) {
      const chain = /^-N (\S+)$/.exec(line)?.[1];
      if (!chain?.startsWith(TENANT_CHAIN_PREFIX) || chains.has(chain)) continue;
      await runHost("iptables", ["-w", "5", "-t", WALL_TABLE, "-F", chain]);
      await runHost("iptables", ["-w", "5", "-t", WALL_TABLE, "-X", chain]);
    }
    written = text;
    log.debug("tenant wall written", { pods: owners.size, chains: chains.size });
  }

  async function sync(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = write().finally(() => {
      running = null;
      if (again && !stopped) {
        again = false;
        schedule();
      }
    });
    return running;
  }

  // Failed writes are tried again, and the chains checked, every 30 s besides every change.
  const resync = setInterval(() => {
    void sync().catch((error: unknown) => log.warn("writing the tenant wall failed", { error }));
  }, options.resyncMs ?? 30_000);
  resync.unref();
  let timeout: NodeJS.Timeout | undefined;
  const listed = await Promise.race([
    pods.synced().then(() => true),
    new Promise<false>((resolve) => {
      timeout = setTimeout(() => resolve(false), options.listTimeoutMs ?? 30_000);
    }),
  ]);
  clearTimeout(timeout);
  if (!listed) {
    stopped = true;
    clearInterval(resync);
    pods.stop();
    throw new Error("the super cluster's pods could not be listed");
  }
  await sync();
  log.info("keeping the wall between tenants' pods", { allowances: allowances.length });
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      clearInterval(resync);
      pods.stop();
    },
    sync,
  };
}
