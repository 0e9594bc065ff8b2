/**
 * Open streams outlive the request that authorised them: a gateway watch, a followed log, an exec
 * or port-forward session, a browser's /ws/ stream. Each is held here with the credential that
 * opened it and ends once that credential no longer carries it — a token revoked or expired, a
 * session ended, a member removed or disabled, a role changed (the role decides the groups the
 * tenant's control plane sees). One check per credential per round, however many streams it
 * holds: a thousand watches of one kubeconfig cost one token verification a round.
 */
import type { SessionUser } from "@/server/core/roles";
import type { Logger } from "@/server/logger";

/** A credential as an open stream holds it. */
export interface HeldCredential {
  /** Equal for equal credentials (`token:<id>`, `session:<hash>`): they are checked once a round. */
  key: string;
  /** Who the credential signs in now, or null once it signs in no one. */
  current(): Promise<SessionUser | null>;
}

/** Why a held stream ends. */
export type LostRight =
  /** The token was revoked or expired, the session ended, the member was removed or disabled. */
  | "credential-invalid"
  /** Still valid, but for another role (or person): the stream was opened with rights it no longer has. */
  | "role-changed";

/**
 * Whether a credential that opened a stream as `opened` still carries it: the same person, in the
 * same tenant, with the same role. Any role change ends the stream — a downgrade must, and an
 * upgrade costs only a reconnect that then carries the new rights.
 */
export function rightStillHeld(opened: SessionUser, now: SessionUser | null): LostRight | null {
  if (!now) return "credential-invalid";
  if (now.id !== opened.id || now.tenant !== opened.tenant || now.role !== opened.role) return "role-changed";
  return null;
}

export interface CredentialRechecksOptions {
  /**
   * How often every held credential is checked (default 5 s: half of the 10 s promised, so a slow
   * database round still keeps it).
   */
  intervalMs?: number;
  /** Credentials checked at once in a round (bounds the load on the database). */
  concurrency?: number;
  /**
   * How long a credential may go unverifiable (the database away) before its streams end as if it
   * were invalid (default 60 s): a short outage keeps them, a long one does not keep them forever.
   */
  maxUnverifiedMs?: number;
  /** The clock (tests). */
  now?: () => number;
  logger: Logger;
}

export interface CredentialRechecks {
  /**
   * Holds a stream until the returned release is called; `end` runs once, with why, as soon as a
   * round finds that `credential` no longer carries what it was opened as.
   */
  hold(credential: HeldCredential, opened: SessionUser, end: (why: LostRight) => void): () => void;
  /** Checks every held credential now (the timer's round; tests call it by hand). */
  round(): Promise<void>;
  /** Streams held now. */
  size(): number;
  close(): void;
}

interface Held {
  opened: SessionUser;
  end(why: LostRight): void;
}

export function createCredentialRechecks(options: CredentialRechecksOptions): CredentialRechecks {
  const intervalMs = options.intervalMs ?? 5_000;
  const concurrency = options.concurrency ?? 8;
  const maxUnverifiedMs = options.maxUnverifiedMs ?? 60_000;
  const clock = options.now ?? Date.now;
  const byKey = new Map<
    string,
    { credential: HeldCredential; streams: Set<Held>; unverifiedSince?: number }
  >();
  let timer: NodeJS.Timeout | undefined;
  let roundRunning = false;

  function stopWhenIdle() {
    if (byKey.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  async function check(key: string): Promise<void> {
    const entry = byKey.get(key);
    if (!entry) return;
    let now: SessionUser | null;
    try {
      now = await entry.credential.current();
      entry.unverifiedSince = undefined;
    } catch (error) {
      // The database is away for a moment: keep the streams (new requests fail meanwhile) and ask
      // again next round rather than cut every open stream of the process at once — for a while.
      entry.unverifiedSince ??= clock();
      if (clock() - entry.unverifiedSince < maxUnverifiedMs) {
        options.logger.warn("rechecking an open stream's credential failed; trying again next round", {
          error,
        });
        return;
      }
      options.logger.warn(
        "an open stream's credential could not be verified for too long; ending its streams",
        {
          error,
        },
      );
      now = null;
    }
    for (const held of [...entry.streams]) {
      const lost = rightStillHeld(held.opened, now);
      if (!lost) continue;
      entry.streams.delete(held);
      try {
        held.end(lost);
      } catch (error) {
        options.logger.warn("ending a stream whose right ended failed", { error });
      }
    }
    if (entry.streams.size === 0 && byKey.get(key) === entry) byKey.delete(key);
  }

  async function round(): Promise<void> {
    const keys = [...byKey.keys()];
    let next = 0;
    const worker = async () => {
      while (next < keys.length) await check(keys[next++] as string);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, keys.length) }, worker));
    stopWhenIdle();
  }

  return {
    hold(credential, opened, end) {
      let entry = byKey.get(credential.key);
      if (!entry) {
        entry = { credential, streams: new Set() };
        byKey.set(credential.key, entry);
      }
      let ended = false;
      const held: Held = {
        opened,
        end: (why) => {
          if (ended) return;
          ended = true;
          end(why);
        },
      };
      entry.streams.add(held);
      if (!timer) {
        // A round still running when the next is due is not started twice.
        timer = setInterval(() => {
          if (roundRunning) return;
          roundRunning = true;
          void round().finally(() => {
            roundRunning = false;
          });
        }, intervalMs);
        timer.unref();
      }
      const heldIn = entry;
      return () => {
        ended = true;
        heldIn.streams.delete(held);
        if (heldIn.streams.size === 0 && byKey.get(credential.key) === heldIn) byKey.delete(credential.key);
        stopWhenIdle();
      };
    },
    round,
    size: () => {
      let total = 0;
      for (const entry of byKey.values()) total += entry.streams.size;
      return total;
    },
    close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      byKey.clear();
    },
  };
}
