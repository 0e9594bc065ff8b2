/** Throttling of repeated sign-in failures per username. */
import { normaliseUsername } from "./accounts";

export interface LoginThrottleOptions {
  /** Failures within `windowMs` before the username is locked. */
  maxFailures: number;
  windowMs: number;
  /** First lock length; doubles with each further failure, up to `maxLockMs`. */
  baseLockMs: number;
  maxLockMs: number;
  maxEntries: number;
}

export interface LoginThrottle {
  /** Seconds to wait, or 0 when an attempt is allowed now. */
  retryAfter(username: string): number;
  failed(username: string): void;
  succeeded(username: string): void;
}

export function createLoginThrottle(
  options: Partial<LoginThrottleOptions> = {},
  now: () => number = Date.now,
): LoginThrottle {
  const settings: LoginThrottleOptions = {
    maxFailures: 5,
    windowMs: 15 * 60_000,
    baseLockMs: 30_000,
    maxLockMs: 15 * 60_000,
    maxEntries: 10_000,
    ...options,
  };
  const state = new Map<string, { failures: number; firstAt: number; lockedUntil: number }>();
  const prune = () => {
    const at = now();
    for (const [key, entry] of state) {
      if (entry.lockedUntil <= at && at - entry.firstAt > settings.windowMs) state.delete(key);
    }
    // Still full (a spray of distinct usernames): drop the oldest records.
    for (const key of state.keys()) {
      if (state.size < settings.maxEntries) break;
      state.delete(key);
    }
  };
  return {
    retryAfter(username) {
      const entry = state.get(normaliseUsername(username));
      if (!entry) return 0;
      const wait = entry.lockedUntil - now();
      return wait > 0 ? Math.ceil(wait / 1000) : 0;
    },
    failed(username) {
      const key = normaliseUsername(username);
      const at = now();
      let entry = state.get(key);
      if (!entry || (at - entry.firstAt > settings.windowMs && entry.lockedUntil <= at)) {
        if (state.size >= settings.maxEntries) prune();
        entry = { failures: 0, firstAt: at, lockedUntil: 0 };
        state.set(key, entry);
      }
      entry.failures += 1;
      if (entry.failures >= settings.maxFailures) {
        const lock = settings.baseLockMs * 2 ** (entry.failures - settings.maxFailures);
        entry.lockedUntil = at + Math.min(lock, settings.maxLockMs);
        entry.firstAt = at;
      }
    },
    succeeded(username) {
      state.delete(normaliseUsername(username));
    },
  };
}
