/**
 * The host's wall around real nodes' pods (iptables, mangle table: traversed before the filter
 * table, where kube-router's NetworkPolicy chains ACCEPT what policies allow, so nothing there can
 * open what this wall drops). A pod's packets arrive on a ring0br* bridge:
 *   - to the host itself (INPUT): only replies to connections the host opened, and TCP or UDP to
 *     a socket bound to exactly POD_API_ADDRESS (Ring0's listeners for tenants' API servers, each of
 *     which admits only its own tenant's pods, and the pods' DNS, which answers each pod as its tenant);
 *     a pod cannot reach anything else listening on this host, on any address (Ring0, the super
 *     cluster's API server, an agent on 0.0.0.0 — the socket match ignores wildcard listeners —,
 *     the kubelet), except what NODE_AGENTS_CHAIN lets through: a node's own vn-agent pod to its
 *     node's kubelet API (filled by ./tenant-wall.ts, empty until then);
 *   - through the host (FORWARD): only to the pod network (Services are DNAT-ed to pods before
 *     this), and there only to pods of its own tenant (TENANTS_CHAIN, filled by ./tenant-wall.ts);
 *     nothing beyond this host's pods, whatever route a pod would add;
 *   - over IPv6 (ip6tables; pods have link-local addresses and no IPv6 network): replies only, in
 *     and through, so a host listener on [::] is out of reach too;
 *   - from the host itself to the pod or Service network where nothing serves (a cluster IP
 *     kube-proxy has not programmed yet, a node's subnet with no bridge): the sink device's routes
 *     (SINK_DEVICE) drop it here, where the default route would have sent it off this host.
 * Ring0's own chains, jumped to first; removed with the last real node. kube-proxy's rules
 * (Services) are kube-proxy's, removed by `kube-proxy --cleanup`; the kubelet's KUBE-FIREWALL chain
 * (IPv4 and IPv6), which it leaves behind, is removed here with the last real node.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { cidrsOverlap, parseCidr } from "@/server/core/cidr";
import { CommandError } from "../process";
import { runHost } from "./host";
import { POD_API_ADDRESS, POD_NETWORK, SERVICE_NETWORK } from "./plan";

export const INPUT_CHAIN = "RING0-PODS-INPUT";
export const FORWARD_CHAIN = "RING0-PODS-FORWARD";
/** Which pods a pod may open connections to (./tenant-wall.ts writes its rules; empty until then). */
export const TENANTS_CHAIN = "RING0-TENANTS";
/**
 * Which pods may reach a service of the host (./tenant-wall.ts writes its rules: a vn-agent pod its
 * own node's kubelet API); returns to the INPUT chain's final DROP for anything else.
 */
export const NODE_AGENTS_CHAIN = "RING0-NODE-AGENTS";
/** The chains the tenant wall writes, made apart (never declared in the host wall's transaction). */
const WALL_WRITTEN_CHAINS = new Set([TENANTS_CHAIN, NODE_AGENTS_CHAIN]);
/** The tenants' chain before the tenant wall first writes it: replies only. */
export const UNWRITTEN_TENANTS_RULES = [
  ["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"],
  ["-j", "DROP"],
];
/** The table of Ring0's chains (before filter, where other programs ACCEPT). */
export const WALL_TABLE = "mangle";
const BRIDGES = "ring0br+";
/** The kubelet's chain against packets to 127.0.0.0/8 from elsewhere. */
const KUBELET_CHAIN = "KUBE-FIREWALL";

export type IpFamily = "ipv4" | "ipv6";
const BINARIES: Record<IpFamily, { tables: string; restore: string }> = {
  ipv4: { tables: "iptables", restore: "iptables-restore" },
  ipv6: { tables: "ip6tables", restore: "ip6tables-restore" },
};

/**
 * The rules of Ring0's chains (pure, for tests and for reading). Pods have IPv6 link-local
 * addresses (no IPv6 network): the IPv6 wall lets them reach nothing on or through the host, so a
 * host listener on `[::]` is as far out of reach as one on 0.0.0.0.
 */
export function firewallRules(
  family: IpFamily = "ipv4",
): { chain: string; from?: string; rules: string[][] }[] {
  if (family === "ipv6") {
    return [
      {
        chain: INPUT_CHAIN,
        from: "INPUT",
        rules: [
          ["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"],
          ["-j", "DROP"],
        ],
      },
      { chain: FORWARD_CHAIN, from: "FORWARD", rules: [["-j", "DROP"]] },
    ];
  }
  return [
    {
      chain: INPUT_CHAIN,
      from: "INPUT",
      rules: [
        ["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"],
        ["-d", `${POD_API_ADDRESS}/32`, "-p", "tcp", "-m", "socket", "-j", "ACCEPT"],
        ["-d", `${POD_API_ADDRESS}/32`, "-p", "udp", "-m", "socket", "-j", "ACCEPT"],
        ["-j", NODE_AGENTS_CHAIN],
        ["-j", "DROP"],
      ],
    },
    {
      chain: FORWARD_CHAIN,
      from: "FORWARD",
      rules: [
        ["-d", POD_NETWORK, "-j", TENANTS_CHAIN],
        ["-d", POD_NETWORK, "-j", "RETURN"],
        ["-j", "DROP"],
      ],
    },
    // Jumped to from the FORWARD chain above only; its rules are the tenant wall's.
    { chain: TENANTS_CHAIN, rules: [] },
    // Jumped to from the INPUT chain above only; its rules are the tenant wall's (none: nothing).
    { chain: NODE_AGENTS_CHAIN, rules: [] },
  ];
}

const iptables = (args: string[], binary = "iptables", table = WALL_TABLE) =>
  runHost(binary, ["-w", "5", "-t", table, ...args]);

async function succeeds(args: string[], binary = "iptables", table = WALL_TABLE): Promise<boolean> {
  try {
    await iptables(args, binary, table);
    return true;
  } catch (error) {
    if (error instanceof CommandError) return false;
    throw error;
  }
}

/**
 * Ring0's chains as one iptables-restore transaction (`--noflush`: the rest of the table stays).
 * The tenants' chain must exist already (ensureHostFirewall makes it): its rules are the tenant wall's.
 */
export function firewallRestoreText(family: IpFamily = "ipv4"): string {
  // A declared chain is flushed even with --noflush: the tenants' chain is made apart, never declared.
  const chains = firewallRules(family).filter(({ chain }) => !WALL_WRITTEN_CHAINS.has(chain));
  return [
    `*${WALL_TABLE}`,
    ...chains.map(({ chain }) => `:${chain} - [0:0]`),
    ...chains.flatMap(({ chain, rules }) => rules.map((rule) => `-A ${chain} ${rule.join(" ")}`)),
    "COMMIT",
    "",
  ].join("\n");
}

/**
 * Ring0's chains with exactly their rules, jumped to first from INPUT and FORWARD for the bridges.
 * The chains are written in one transaction, so a restart never leaves them empty for a moment (a
 * flush and then appends would let pods reach the host in between).
 */
export async function ensureHostFirewall(): Promise<void> {
  for (const family of ["ipv4", "ipv6"] as const) {
    const { tables, restore } = BINARIES[family];
    for (const { chain } of firewallRules(family)) {
      if (!WALL_WRITTEN_CHAINS.has(chain) || (await succeeds(["-n", "-L", chain], tables))) continue;
      // Closed until the tenant wall writes it: replies pass, no new connection between pods (and
      // no pod reaches a service of the host).
      await iptables(["-N", chain], tables);
      if (chain === TENANTS_CHAIN)
        for (const rule of UNWRITTEN_TENANTS_RULES) await iptables(["-A", chain, ...rule], tables);
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ring0-firewall-"));
    try {
      const file = path.join(dir, "rules");
      fs.writeFileSync(file, firewallRestoreText(family), { mode: 0o600 });
      await runHost(restore, ["-w", "5", "--noflush", file]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    for (const { chain, from } of firewallRules(family)) {
      if (!from) continue;
      const jump = [from, "-i", BRIDGES, "-j", chain];
      if (!(await succeeds(["-C", ...jump], tables)))
        await iptables(["-I", from, "1", "-i", BRIDGES, "-j", chain], tables);
    }
  }
  await ensureBridgeFiltering();
  await ensurePodApiAddress();
  await ensureSinkRoutes();
}

/**
 * A bridge with no ports whose routes take the host's own traffic to the pod network (below each
 * node's bridge, whose /24 is more specific) and the Service network (kube-proxy DNATs a programmed
 * cluster IP after this lookup and routes it again): what nothing here serves ends on it, unanswered
 * ("no route to host" once ARP gives up). A bridge, not a dummy device: this kernel may lack the
 * dummy module; an unreachable route would refuse a programmed cluster IP too (the lookup comes
 * before kube-proxy's DNAT).
 */
export const SINK_DEVICE = "ring0sink";
export const SINK_ROUTES = [POD_NETWORK, SERVICE_NETWORK];

/**
 * The host's routes (`ip -4 -o route show` lines) that overlap `networks`, other than the default
 * route and Ring0's own (its bridges and the sink) (pure: unit-tested). The pod and Service networks
 * must be this host's alone: a LAN route there would be shadowed, or would take pods' traffic away.
 */
export function overlappingRoutes(routes: string, networks: string[] = SINK_ROUTES): string[] {
  const wanted = networks.map(parseCidr).filter((entry) => entry !== undefined);
  return routes
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => {
      const [destination = ""] = line.split(/\s+/);
      const device = /\bdev (\S+)/.exec(line)?.[1] ?? "";
      if (destination === "default" || /^ring0(br\d+|sink)$/.test(device)) return false;
      const route = parseCidr(destination);
      return route !== undefined && wanted.some((network) => cidrsOverlap(network, route));
    });
}

async function ensureSinkRoutes(): Promise<void> {
  const { stdout } = await runHost("ip", ["-4", "-o", "route", "show", "table", "main"]);
  const overlapping = overlappingRoutes(stdout);
  if (overlapping.length > 0) {
    throw new Error(
      `this host's routes overlap Ring0's pod and Service networks (${SINK_ROUTES.join(", ")}), which real nodes need to themselves: ${overlapping.join("; ")}`,
    );
  }
  if (!fs.existsSync(path.join("/sys/class/net", SINK_DEVICE))) {
    await runHost("ip", ["link", "add", SINK_DEVICE, "type", "bridge"]);
  }
  await runHost("ip", ["link", "set", SINK_DEVICE, "up"]);
  // The source a connection from the host takes: the pod API address, which every pod reaches
  // back through its gateway (not an address of this host's outside network).
  for (const destination of SINK_ROUTES) {
    await runHost("ip", ["route", "replace", destination, "dev", SINK_DEVICE, "src", POD_API_ADDRESS]);
  }
}

async function removeSinkRoutes(): Promise<void> {
  if (fs.existsSync(path.join("/sys/class/net", SINK_DEVICE))) {
    await runHost("ip", ["link", "delete", SINK_DEVICE]);
  }
}

/** The sysctls that send bridged frames (pod to pod on one bridge) through iptables. */
export const BRIDGE_FILTER_SYSCTLS = [
  "/proc/sys/net/bridge/bridge-nf-call-iptables",
  "/proc/sys/net/bridge/bridge-nf-call-ip6tables",
];

/**
 * Pods on one bridge talk through it, not through the host's routing: only with br_netfilter's
 * sysctls on do their frames pass the walls' iptables chains (and kube-router's). Without them
 * every wall between pods would be open, so real nodes refuse to run.
 */
async function ensureBridgeFiltering(): Promise<void> {
  if (!fs.existsSync(BRIDGE_FILTER_SYSCTLS[0] as string)) {
    await runHost("modprobe", ["br_netfilter"]).catch(() => undefined);
  }
  for (const file of BRIDGE_FILTER_SYSCTLS) {
    try {
      if (fs.readFileSync(file, "utf8").trim() !== "1") fs.writeFileSync(file, "1\n");
    } catch (error) {
      throw new Error(
        `${file} cannot be read or set to 1 (${(error as Error).message}): without br_netfilter, pods on one bridge would bypass every wall between them`,
      );
    }
  }
}

/** Whether POD_API_ADDRESS is on this host now (tenants' API listeners bind it only then). */
export function hasPodApiAddress(): boolean {
  return Object.values(os.networkInterfaces()).some((addresses) =>
    addresses?.some((address) => address.address === POD_API_ADDRESS),
  );
}

async function ensurePodApiAddress(): Promise<void> {
  if (!hasPodApiAddress()) await runHost("ip", ["addr", "add", `${POD_API_ADDRESS}/32`, "dev", "lo"]);
}

async function removePodApiAddress(): Promise<void> {
  if (hasPodApiAddress()) await runHost("ip", ["addr", "del", `${POD_API_ADDRESS}/32`, "dev", "lo"]);
}

export async function removeHostFirewall(): Promise<void> {
  await removeSinkRoutes();
  await removePodApiAddress();
  for (const family of ["ipv4", "ipv6"] as const) {
    const { tables } = BINARIES[family];
    // The filter table too: Ring0 kept its chains there before kube-router came.
    for (const table of [WALL_TABLE, "filter"]) {
      const chains = firewallRules(family);
      for (const { chain, from } of chains) {
        if (!from) continue;
        while (await succeeds(["-D", from, "-i", BRIDGES, "-j", chain], tables, table)) {
          // every copy of the jump
        }
      }
      for (const { chain } of chains) {
        if (await succeeds(["-n", "-L", chain], tables, table)) {
          await iptables(["-F", chain], tables, table);
          await iptables(["-X", chain], tables, table);
        }
      }
    }
  }
  await removeTenantChains();
  for (const binary of ["iptables", "ip6tables"]) {
    for (const from of ["INPUT", "OUTPUT"]) {
      while (await succeeds(["-D", from, "-j", KUBELET_CHAIN], binary, "filter")) {
        // every copy of the kubelet's jump
      }
    }
    if (await succeeds(["-n", "-L", KUBELET_CHAIN], binary, "filter")) {
      await iptables(["-F", KUBELET_CHAIN], binary, "filter");
      await iptables(["-X", KUBELET_CHAIN], binary, "filter");
    }
  }
}

/** Prefix of the tenant wall's per-owner chains (./tenant-wall.ts), removed with the wall. */
export const TENANT_CHAIN_PREFIX = "RING0-T-";

/** The tenant wall's per-owner chains, once the tenants' chain that jumps to them is gone. */
async function removeTenantChains(): Promise<void> {
  const listed = (await iptables(["-S"])).stdout.split("\n");
  const chains = listed
    .map((line) => /^-N (\S+)$/.exec(line)?.[1])
    .filter((chain): chain is string => Boolean(chain?.startsWith(TENANT_CHAIN_PREFIX)));
  for (const chain of chains) await iptables(["-F", chain]);
  for (const chain of chains) await iptables(["-X", chain]);
}
