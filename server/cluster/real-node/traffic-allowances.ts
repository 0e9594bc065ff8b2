/**
 * The operator's leave for one tenant's pods to reach another's (RING0_TENANT_TRAFFIC_ALLOW; pure,
 * a leaf, so configuration can validate it). The tenant wall (./tenant-wall.ts) enforces it.
 */

/** A tenant's name (a DNS label). */
export const TENANT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * RING0_TENANT_TRAFFIC_ALLOW: `FROM>TO` pairs, comma-separated (`globex>acme`: globex's pods may
 * open connections to acme's). Throws naming the bad entry.
 */
export function parseTrafficAllowances(text: string | undefined): [string, string][] {
  if (!text?.trim()) return [];
  return text.split(",").map((entry, index) => {
    const [from, to, extra] = entry.trim().split(">");
    if (
      extra !== undefined ||
      !from ||
      !to ||
      !TENANT_NAME.test(from.trim()) ||
      !TENANT_NAME.test(to.trim())
    ) {
      throw new Error(
        `entry ${index + 1} ("${entry.trim()}") is not FROM>TO with two tenant names (like globex>acme)`,
      );
    }
    return [from.trim(), to.trim()];
  });
}
