/** Credentials as requests carry them, read once for tRPC, the streams and route handlers alike. */
import { tokenMarker } from "@/server/tokens/format";

/**
 * The credential in an `Authorization: Bearer …` header: a Ring0 token, something else (refused
 * rather than silently ignored), or none (not a bearer header at all — the cookie decides).
 */
export function bearerCredential(header: string | null): { token: string } | { malformed: true } | null {
  const match = /^\s*bearer(?:\s+(.*))?$/i.exec(header ?? "");
  if (!match) return null;
  const credential = (match[1] ?? "").trim();
  return credential.startsWith(tokenMarker) ? { token: credential } : { malformed: true };
}
