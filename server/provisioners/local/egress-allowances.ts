/**
 * The operator's egress allowances for tenant control planes (`RING0_TENANT_EGRESS_ALLOW`): address
 * ranges and ports a tenant's webhooks and aggregated APIs may reach besides the tenant's own pods
 * (./egress-policy.ts). A leaf: configuration validates it at start-up.
 */

import net from "node:net";
import { cidrsOverlap } from "@/server/core/cidr";

export interface EgressTarget {
  host: string;
  port: number;
}

/** One operator allowance: an address range and a port (or every port). */
export interface EgressAllowance {
  network: string;
  prefix: number;
  port: number | "*";
}

/**
 * Operator allowances from `RING0_TENANT_EGRESS_ALLOW`: comma-separated `ADDRESS[/PREFIX]:PORT`
 * (PORT may be `*`; IPv6 in brackets: `[ADDRESS/PREFIX]:PORT`). Throws naming what to fix.
 */
export function parseEgressAllowances(text: string): EgressAllowance[] {
  const allowances: EgressAllowance[] = [];
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (!entry) continue;
    const match = /^(?:\[([^\]]+)\]|([^:]+)):(\*|\d{1,5})$/.exec(entry);
    if (!match) {
      throw new Error(
        `"${entry}" is not ADDRESS[/PREFIX]:PORT (e.g. 10.0.0.0/28:443 or 10.244.3.9:*; IPv6 in brackets: [ADDRESS/PREFIX]:PORT)`,
      );
    }
    const [address = "", prefixText] = (match[1] ?? match[2] ?? "").split("/");
    const family = net.isIP(address);
    if (family === 0)
      throw new Error(`"${entry}": ${address} is not an IP address (names are never allowed)`);
    const width = family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? width : Number(prefixText);
    if (
      !Number.isInteger(prefix) ||
      prefix < 0 ||
      prefix > width ||
      !/^\d+$/.test(prefixText ?? `${width}`)
    ) {
      throw new Error(`"${entry}": the prefix must be 0–${width}`);
    }
    const reserved = reservedOverlap(address, prefix, family);
    if (reserved) {
      throw new Error(
        `"${entry}" reaches ${reserved}, which no tenant's control plane may dial: allow the addresses of the service itself`,
      );
    }
    const port = match[3] === "*" ? "*" : Number(match[3]);
    if (port !== "*" && (port < 1 || port > 65_535))
      throw new Error(`"${entry}": the port must be 1–65535 or *`);
    allowances.push({ network: address, prefix, port });
  }
  return allowances;
}

/** Ranges an allowance may not touch: this host's loopback, link-local (metadata) and non-unicast. */
const reservedRanges: { name: string; network: string; prefix: number; family: 4 | 6 }[] = [
  { name: "this host (0.0.0.0/8)", network: "0.0.0.0", prefix: 8, family: 4 },
  { name: "loopback (127.0.0.0/8)", network: "127.0.0.0", prefix: 8, family: 4 },
  {
    name: "link-local and metadata addresses (169.254.0.0/16)",
    network: "169.254.0.0",
    prefix: 16,
    family: 4,
  },
  { name: "multicast and reserved (224.0.0.0/3)", network: "224.0.0.0", prefix: 3, family: 4 },
  { name: "loopback or unspecified (::/127)", network: "::", prefix: 127, family: 6 },
  { name: "IPv4-mapped addresses (::ffff:0:0/96)", network: "::ffff:0:0", prefix: 96, family: 6 },
  { name: "link-local addresses (fe80::/10)", network: "fe80::", prefix: 10, family: 6 },
  { name: "multicast (ff00::/8)", network: "ff00::", prefix: 8, family: 6 },
];

/** The reserved range `network/prefix` overlaps (two CIDRs overlap when one holds the other's base). */
function reservedOverlap(network: string, prefix: number, family: number): string | undefined {
  for (const range of reservedRanges) {
    if (range.family !== family) continue;
    if (cidrsOverlap(range, { network, prefix })) return range.name;
  }
  return undefined;
}

/** Whether an operator allowance covers `target` (an IP address; names never match). */
export function allowedByOperator(allowances: readonly EgressAllowance[], target: EgressTarget): boolean {
  const family = net.isIP(target.host);
  if (family === 0) return false;
  return allowances.some((allowance) => {
    if (allowance.port !== "*" && allowance.port !== target.port) return false;
    const list = new net.BlockList();
    list.addSubnet(allowance.network, allowance.prefix, net.isIP(allowance.network) === 6 ? "ipv6" : "ipv4");
    return list.check(target.host, family === 6 ? "ipv6" : "ipv4");
  });
}
