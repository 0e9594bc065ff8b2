/**
 * What Ring0's two HTTP proxies (the kube gateway in front of tenant API servers, the vn-agents in
 * front of kubelets) relay of an upstream's response: end-to-end headers only. Hop-by-hop headers
 * (and those a Connection header names) belong to one connection, proxy-* to the proxy hop, and
 * cookies to no one here: none crosses. An upgrade keeps Connection and Upgrade, which are its point.
 */
import type { IncomingHttpHeaders } from "node:http";

export const hopByHopHeaders: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "http2-settings",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  // Node's server has already answered "100 Continue" to the client.
  "expect",
]);

/** The header names a Connection header lists (they are hop-by-hop too). */
export function connectionTokens(headers: IncomingHttpHeaders): Set<string> {
  const value = headers.connection;
  const joined = Array.isArray(value) ? value.join(",") : (value ?? "");
  return new Set(
    joined
      .split(",")
      .map((token) => token.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** The upstream response headers a proxy relays to its client. */
export function relayedResponseHeaders(
  incoming: IncomingHttpHeaders,
  options: { upgrade?: boolean } = {},
): Record<string, string | string[]> {
  const listed = connectionTokens(incoming);
  const out: Record<string, string | string[]> = {};
  for (const [rawName, value] of Object.entries(incoming)) {
    const name = rawName.toLowerCase();
    if (value === undefined) continue;
    if (options.upgrade && (name === "connection" || name === "upgrade")) {
      out[name] = value;
      continue;
    }
    if (hopByHopHeaders.has(name) || listed.has(name) || name.startsWith("proxy-") || name === "set-cookie")
      continue;
    out[name] = value;
  }
  return out;
}
