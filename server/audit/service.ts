import { type AuditEventInput, createAuditRepository } from "@/server/audit/repository";
import type { SessionUser } from "@/server/core/roles";
import { getDb, type PrismaClient } from "@/server/db/client";
import { logger } from "@/server/logger";

/**
 * Records an audit event. Auditing must not take the action down with it, but a lost event is
 * itself worth an error line, so failures are logged loudly rather than thrown.
 */
export async function recordAudit(event: AuditEventInput, db?: PrismaClient | null): Promise<void> {
  try {
    await createAuditRepository(db ?? getDb()).record(event);
  } catch (error) {
    logger.error("audit event could not be recorded", { action: event.action, error });
  }
}

/** Who acts: a signed-in user within a request, and the database the request uses. */
export interface AuditActor {
  user: Pick<SessionUser, "id" | "name" | "tenant">;
  requestId?: string | null;
  /** The request's database; absent (in-process test callers may have none): the process-wide one. */
  db?: PrismaClient | null;
}

/** A successful action of the actor on one target. */
export interface ActorEvent {
  /** Dotted verb, e.g. `tenant.create`. */
  action: string;
  /** The tenant the event concerns (its admins read it); null for platform events. */
  tenant?: string | null;
  targetKind: string;
  target: string;
  detail?: Record<string, unknown> | null;
}

/**
 * The audit of one actor: `auditAs(ctx)(event)` records `event` as done by the context's user in
 * its request, so no caller spells the actor's fields out again.
 */
export function auditAs(actor: AuditActor): (event: ActorEvent) => Promise<void> {
  return (event) =>
    recordAudit(
      {
        actorId: actor.user.id,
        actorName: actor.user.name,
        actorTenant: actor.user.tenant,
        tenant: event.tenant ?? null,
        action: event.action,
        targetKind: event.targetKind,
        target: event.target,
        result: "success",
        requestId: actor.requestId ?? null,
        detail: event.detail ?? null,
      },
      actor.db,
    );
}
