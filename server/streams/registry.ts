/**
 * The open browser streams of this process: caps per user and per tenant, and closing every stream
 * of a user at once (sign-out, revocation). Shared through globalThis so Next's route handlers
 * (a separate module graph in the same process, e.g. the sign-out route) reach server.ts's streams.
 */
import { processSlot } from "@/server/core/process-slots";
import { closeCodes } from "@/server/core/stream-protocol";

export interface StreamLimits {
  perUser: number;
  perTenant: number;
}

export interface OpenStream {
  /** The user's IAM subject. */
  subject: string;
  /** The tenant whose share the stream counts against (the operator's own tenant for operators). */
  tenant: string;
  /** e.g. "logs", "exec". */
  kind: string;
  close(code: number, reason: string): void;
}

export type Admission = { ok: true; release: () => void } | { ok: false; message: string };

export interface StreamRegistry {
  /** Counts the stream in, or says which cap it would break. */
  admit(stream: OpenStream): Admission;
  /** Closes every stream of the user; returns how many. */
  closeSubject(subject: string, code: number, reason: string): number;
  counts(): { total: number; byKind: Record<string, number> };
}

export function createStreamRegistry(limits: StreamLimits): StreamRegistry {
  const open = new Set<OpenStream>();
  const count = (predicate: (stream: OpenStream) => boolean) => {
    let n = 0;
    for (const stream of open) if (predicate(stream)) n += 1;
    return n;
  };
  return {
    admit(stream) {
      const mine = count((other) => other.subject === stream.subject);
      if (mine >= limits.perUser) {
        return {
          ok: false,
          message: `You already have ${mine} log or shell streams open (the limit per user is ${limits.perUser}). Close one (another tab or panel) and try again.`,
        };
      }
      const tenants = count((other) => other.tenant === stream.tenant);
      if (tenants >= limits.perTenant) {
        return {
          ok: false,
          message: `Tenant "${stream.tenant}" already has ${tenants} streams open (the limit per tenant is ${limits.perTenant}). Try again when some have closed.`,
        };
      }
      open.add(stream);
      return { ok: true, release: () => open.delete(stream) };
    },
    closeSubject(subject, code, reason) {
      let closed = 0;
      for (const stream of [...open]) {
        if (stream.subject !== subject) continue;
        open.delete(stream);
        stream.close(code, reason);
        closed += 1;
      }
      return closed;
    },
    counts() {
      const byKind: Record<string, number> = {};
      for (const stream of open) byKind[stream.kind] = (byKind[stream.kind] ?? 0) + 1;
      return { total: open.size, byKind };
    },
  };
}

const slot = processSlot<StreamRegistry | null>("streamRegistry");

export function setStreamRegistry(registry: StreamRegistry | null): void {
  slot.set(registry);
}

export function getStreamRegistry(): StreamRegistry | null {
  return slot.get() ?? null;
}

/** Ends the user's open streams now (sign-out, membership removed, token revoked). */
export function endStreamsOf(
  subject: string,
  reason = "Your session ended. Sign in again to reconnect.",
): number {
  return getStreamRegistry()?.closeSubject(subject, closeCodes.sessionEnded, reason) ?? 0;
}
