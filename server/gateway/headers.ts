/**
 * What crosses the gateway in headers. Identity is the gateway's alone: everything a client could
 * use to claim one (Authorization, Impersonate-*, the front-proxy's X-Remote-*, cookies) is dropped
 * and the gateway sets the impersonation of the authenticated Ring0 user. Hop-by-hop headers belong
 * to one connection and never cross (upgrades keep Connection/Upgrade, which is the point of them).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { connectionTokens, hopByHopHeaders, relayedResponseHeaders } from "@/server/proxy/headers";

/** Headers that claim an identity (or carry the browser session); never forwarded upstream. */
function claimsIdentity(name: string): boolean {
  return (
    name === "authorization" ||
    name === "cookie" ||
    name.startsWith("impersonate-") ||
    name.startsWith("x-remote-") ||
    name.startsWith("proxy-")
  );
}

export interface Impersonation {
  user: string;
  groups: string[];
}

export interface UpstreamHeaderOptions {
  impersonate: Impersonation;
  /** `host[:port]` of the upstream API server. */
  host: string;
  /** The client's address, appended to X-Forwarded-For. */
  clientAddress?: string;
  /** Keep Connection: Upgrade and the Upgrade header (exec, attach, port-forward). */
  upgrade: boolean;
}

/** The request headers to send upstream, from the client's (Node lowercases names). */
export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  options: UpstreamHeaderOptions,
): OutgoingHttpHeaders {
  const listed = connectionTokens(incoming);
  const out: OutgoingHttpHeaders = {};
  for (const [rawName, value] of Object.entries(incoming)) {
    const name = rawName.toLowerCase();
    if (value === undefined) continue;
    if (hopByHopHeaders.has(name) || listed.has(name) || claimsIdentity(name)) continue;
    if (name === "host" || name === "x-forwarded-for") continue;
    out[name] = value;
  }
  out.host = options.host;
  const forwarded = incoming["x-forwarded-for"];
  const chain = [
    ...(Array.isArray(forwarded) ? forwarded : forwarded ? [forwarded] : []),
    ...(options.clientAddress ? [options.clientAddress] : []),
  ];
  if (chain.length > 0) out["x-forwarded-for"] = chain.join(", ");
  if (options.upgrade && typeof incoming.upgrade === "string") {
    out.connection = "Upgrade";
    out.upgrade = incoming.upgrade;
  }
  out["impersonate-user"] = options.impersonate.user;
  if (options.impersonate.groups.length > 0) out["impersonate-group"] = [...options.impersonate.groups];
  return out;
}

/** The upstream response headers to relay to the client. */
export function clientResponseHeaders(incoming: IncomingHttpHeaders, upgrade = false): OutgoingHttpHeaders {
  return relayedResponseHeaders(incoming, { upgrade });
}

/** The bearer token of an Authorization header, or null (cookies are never an alternative). */
export function bearerToken(headers: IncomingHttpHeaders): string | null {
  const value = headers.authorization;
  if (typeof value !== "string") return null;
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(value);
  return match?.[1] ?? null;
}
