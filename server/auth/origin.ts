/**
 * Where a request comes from, decided once for every door a browser's cookies open: tRPC
 * mutations, the /ws/ streams, the kubeconfig downloads, sign-out. A browser attaches Ring0's
 * session cookie to whatever a page on another origin makes it send (other ports of the same host
 * count as the same site for SameSite cookies), so anything acting on that cookie must come from
 * one of Ring0's own origins. A bearer token is set by a program on purpose and carries no
 * ambient authority: it needs no Origin, but a foreign one is still refused.
 */

export interface RequestSource {
  /** The Origin header, if sent. */
  origin: string | null;
  /** The Referer header, consulted only when Origin is absent (some privacy settings drop it). */
  referer: string | null;
  /** Whether the credential is an `Authorization: Bearer` token rather than a cookie. */
  bearer: boolean;
}

/** The origin of a Referer, or null when it is not an absolute URL. */
function refererOrigin(referer: string): string | null {
  return URL.canParse(referer) ? new URL(referer).origin : null;
}

/**
 * Null when the request may act, else the refusal a person can act on. Origin decides when
 * present; else the Referer's origin; with neither, only a bearer token passes.
 */
export function originRefusal(source: RequestSource, allowedOrigins: readonly string[]): string | null {
  const claimed = source.origin ?? (source.referer ? refererOrigin(source.referer) : null);
  if (claimed !== null) {
    if (allowedOrigins.includes(claimed)) return null;
    return `Origin not allowed: ${JSON.stringify(claimed)} is not one of Ring0's own origins (${allowedOrigins.join(", ")}; RING0_ALLOWED_ORIGINS). Requests that act with a Ring0 session must come from Ring0's own pages.`;
  }
  if (source.bearer) return null;
  return "Origin not allowed: a request that acts with a Ring0 session must carry the Origin (or Referer) of one of Ring0's own pages.";
}

/** Methods that change nothing by definition; reads stay readable only by Ring0's own pages (CORS). */
export function isSafeMethod(method: string | undefined): boolean {
  const upper = (method ?? "GET").toUpperCase();
  return upper === "GET" || upper === "HEAD" || upper === "OPTIONS";
}

/**
 * Whether an Authorization header is a bearer one, well-formed or not: where it is, it is the only
 * credential looked at (tRPC's createContext, the streams' authenticate), so no cookie acts.
 */
export function hasBearer(authorization: string | null | undefined): boolean {
  return /^\s*bearer(\s|$)/i.test(authorization ?? "");
}
