/** CIDR ranges, by Node's own address parsing (net.BlockList). */
import net from "node:net";

export interface Cidr {
  network: string;
  prefix: number;
}

/** `network/prefix` (a bare address: the whole address); undefined when it is none. */
export function parseCidr(text: string): Cidr | undefined {
  const [network = "", bits] = text.split("/");
  const family = net.isIP(network);
  if (family === 0) return undefined;
  const max = family === 6 ? 128 : 32;
  const prefix = bits === undefined ? max : Number(bits);
  return Number.isInteger(prefix) &&
    prefix >= 0 &&
    prefix <= max &&
    (bits === undefined || /^\d+$/.test(bits))
    ? { network, prefix }
    : undefined;
}

/** Whether two ranges of one family share an address: one holds the other's base. */
export function cidrsOverlap(one: Cidr, other: Cidr): boolean {
  const family = net.isIP(one.network);
  if (family === 0 || family !== net.isIP(other.network)) return false;
  const type = family === 6 ? "ipv6" : "ipv4";
  const holds = (range: Cidr, address: string) => {
    const list = new net.BlockList();
    list.addSubnet(range.network, range.prefix, type);
    return list.check(address, type);
  };
  return holds(one, other.network) || holds(other, one.network);
}

/**
 * A comma-separated list of ranges (`ADDRESS[/PREFIX]`), written back in `network/prefix` form.
 * Throws naming the entry to fix.
 */
export function parseCidrList(text: string): string[] {
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  return entries.map((entry) => {
    const range = parseCidr(entry);
    if (range && net.isIPv6(range.network) && /^::ffff:/i.test(range.network)) {
      throw new Error(`"${entry}" is an IPv4-mapped IPv6 range: write the IPv4 range itself`);
    }
    if (!range) {
      throw new Error(
        `"${entry}" is not an address range: write ADDRESS/PREFIX (10.244.0.0/16, fd00::/64) or an address, comma-separated`,
      );
    }
    return `${range.network}/${range.prefix}`;
  });
}
