/**
 * A short-lived cache of successful token verifications for the kube gateway. Verifying a token is
 * a database read (≈3 ms, the larger part of the gateway's added latency); kubectl sends bursts of
 * requests with one token. Only successes are cached, keyed by the token's SHA-256, for `ttlMs`
 * (2 s by default): a revoked or expired token, a removed membership or a role change is therefore
 * honoured by new requests within that many seconds. Open streams are rechecked with `refresh`,
 * which always asks the database and replaces the entry, so a recheck that finds a token revoked
 * also refuses the next request at once.
 */
import { hashToken } from "@/server/tokens/format";

export interface TokenCacheOptions {
  ttlMs?: number;
  /** Entries kept at most (oldest evicted first). */
  max?: number;
  now?: () => number;
}

export interface CachingVerifier<T> {
  (plaintext: string): Promise<T | null>;
  /** Verifies past the cache and keeps the answer (a refusal drops the entry). */
  refresh(plaintext: string): Promise<T | null>;
}

export function cachingVerifier<T>(
  verify: (plaintext: string) => Promise<T | null>,
  options: TokenCacheOptions = {},
): CachingVerifier<T> {
  const ttlMs = options.ttlMs ?? 2_000;
  const max = options.max ?? 10_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { at: number; value: T }>();

  async function refresh(plaintext: string): Promise<T | null> {
    const key = hashToken(plaintext);
    const value = await verify(plaintext);
    cache.delete(key);
    if (value === null) return null;
    cache.set(key, { at: now(), value });
    if (cache.size > max) cache.delete(cache.keys().next().value as string);
    return value;
  }

  const cached = async (plaintext: string): Promise<T | null> => {
    const hit = cache.get(hashToken(plaintext));
    if (hit && now() - hit.at < ttlMs) return hit.value;
    return refresh(plaintext);
  };
  return Object.assign(cached, { refresh });
}
