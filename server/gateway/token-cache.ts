/**
 * A short-lived cache of successful token verifications for the kube gateway. Verifying a token is
 * a database read (≈3 ms, the larger part of the gateway's added latency); kubectl sends bursts of
 * requests with one token. Only successes are cached, keyed by the token's SHA-256, for `ttlMs`
 * (2 s by default): a revoked or expired token, a removed membership or a role change is therefore
 * honoured within that many seconds, as the issue requires of revocation.
 */
import { hashToken } from "@/server/tokens/format";

export interface TokenCacheOptions {
  ttlMs?: number;
  /** Entries kept at most (oldest evicted first). */
  max?: number;
  now?: () => number;
}

export function cachingVerifier<T>(
  verify: (plaintext: string) => Promise<T | null>,
  options: TokenCacheOptions = {},
): (plaintext: string) => Promise<T | null> {
  const ttlMs = options.ttlMs ?? 2_000;
  const max = options.max ?? 10_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { at: number; value: T }>();
  return async (plaintext) => {
    const key = hashToken(plaintext);
    const hit = cache.get(key);
    if (hit && now() - hit.at < ttlMs) return hit.value;
    cache.delete(key);
    const value = await verify(plaintext);
    if (value === null) return null;
    cache.set(key, { at: now(), value });
    if (cache.size > max) cache.delete(cache.keys().next().value as string);
    return value;
  };
}
