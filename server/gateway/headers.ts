/**
 * What the gateway relays back in headers, and where it finds the client's token. The request
 * headers it sends upstream (the client's identity dropped, the user impersonated) are
 * server/k8s/impersonation.ts', shared with the control plane client.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { isImpersonationHeader } from "@/server/k8s/impersonation";
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

/**
 * The client asks to act as someone else (kubectl --as, --as-group, --as-uid: Impersonate-User,
 * -Group, -Uid, -Extra-*). The gateway refuses it rather than drop the headers: an answer given as
 * the caller's own user to a question asked as another (`kubectl auth can-i --as …`) would mislead.
 */
export function asksToImpersonate(headers: IncomingHttpHeaders): boolean {
  return Object.keys(headers).some((name) => isImpersonationHeader(name.toLowerCase()));
}

export const IMPERSONATION_REFUSED =
  "Ring0 acts as your own user in the tenant's control plane and does not pass on impersonation " +
  "(kubectl --as, --as-group, --as-uid; Impersonate-* headers): send the request without it. To see " +
  "what another user or service account may do, create a SubjectAccessReview for it.";
