/**
 * The operator's egress allowances for tenant control planes (`RING0_TENANT_EGRESS_ALLOW`): address
 * ranges and ports a tenant's webhooks and aggregated APIs may reach besides the tenant's own pods
 * (./egress-policy.ts). A leaf: configuration validates it at start-up.
 */
import net from "node:net";

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
 * (PORT may be `*`; IPv6 in brackets: `[fd00::/64]:443`). Throws naming what to fix.
 */
export function parseEgressAllowances(text: string): EgressAllowance[] {
  const allowances: EgressAllowance[] = [];
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (!entry) continue;
    const match = /^(?:\[([^\]]+)\]|([^:]+)):(\*|\d{1,5})$/.exec(entry);
    if (!match) {
      throw new Error(
        `"${entry}" is not ADDRESS[/PREFIX]:PORT (e.g. 10.96.0.0/12:443, 10.1.2.3:*, [fd00::/64]:443)`,
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
    const port = match[3] === "*" ? "*" : Number(match[3]);
    if (port !== "*" && (port < 1 || port > 65_535))
      throw new Error(`"${entry}": the port must be 1–65535 or *`);
    allowances.push({ network: address, prefix, port });
  }
  return allowances;
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
