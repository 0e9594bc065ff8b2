/**
 * What the gateway relays back in headers, and where it finds the client's token. The request
 * headers it sends upstream (the client's identity dropped, the user impersonated) are
 * server/k8s/impersonation.ts', shared with the control plane client.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { relayedResponseHeaders } from "@/server/proxy/headers";

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
