/**
 * The request headers Ring0 sends a tenant API server when it acts as a user (the kube gateway and
 * the control plane client). Identity is Ring0's alone: everything a client could use to claim one
 * (Authorization, Impersonate-*, the front-proxy's X-Remote-*, cookies) is dropped and the
 * impersonation of the authenticated Ring0 user is set. Hop-by-hop headers belong to one
 * connection and never cross (upgrades keep Connection/Upgrade, which is the point of them).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { connectionTokens, hopByHopHeaders } from "@/server/proxy/headers";

/** Impersonate-User, -Group, -Uid, -Extra-* (kubectl --as …), by their lower-cased name. */
export function isImpersonationHeader(name: string): boolean {
  return name.startsWith("impersonate-");
}

/** Headers that claim an identity (or carry the browser session); never forwarded upstream. */
function claimsIdentity(name: string): boolean {
  return (
    name === "authorization" ||
    name === "cookie" ||
    isImpersonationHeader(name) ||
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
